-- job.dead per statement, not per row: a statement that moves many jobs of one group to dead (the
-- batch of failures of a worker, the expiry of waits) counts them on their group alert with one
-- upsert (count + n), and a statement that moves many replayed jobs to succeeded resolves each
-- group once. The row trigger of 20261202020000_alerts upserted the alert row of the group once per
-- dead job: 10,000 dead jobs made 10,000 versions of one row, and concurrent batches queued on its
-- lock.
--
-- Transition tables cannot be combined with UPDATE OF a column list, so the trigger fires after
-- every UPDATE statement on jobs, and its shell collects the rows whose status changed to dead (or to
-- succeeded after a failure) and calls the SQL functions only when there are some. Written as the
-- migration above: each function one SQL statement, the PL/pgSQL shell one E string with \x3b.

DROP TRIGGER jobs_alerts ON jobs;
DROP FUNCTION jobs_alerts();
DROP FUNCTION job_alerts(jobs);

-- alert_raise, for `p_count` occurrences at once (the callers of one occurrence are unchanged).
DROP FUNCTION alert_raise(uuid, text, uuid, text, text, text, text);
CREATE FUNCTION alert_raise(p_tenant uuid, p_type text, p_connection uuid, p_operation text,
                            p_error_code text, p_summary text, p_subject text DEFAULT NULL, p_count int DEFAULT 1)
RETURNS uuid LANGUAGE sql AS $$
  INSERT INTO alerts AS a (tenant_id, type, connection_id, operation, error_code, subject, group_key, summary, count)
  VALUES (p_tenant, p_type, p_connection, p_operation, p_error_code, p_subject,
          alert_group_key(p_type, p_connection, p_operation, p_error_code), p_summary, p_count)
  ON CONFLICT (tenant_id, group_key) WHERE status <> 'resolved'
  DO UPDATE SET count = a.count + EXCLUDED.count, last_seen_at = now(), updated_at = now()
  RETURNING id
$$;

-- Jobs that went dead in one statement: one raise per group, with the count of the group (groups in key
-- order, so concurrent statements take alert rows in one order).
CREATE FUNCTION jobs_dead_alerts(dead jobs[]) RETURNS void LANGUAGE sql AS $$
  SELECT alert_raise(g.tenant_id, 'job.dead', g.connection_id, g.operation, g.last_error_code,
           format('%s jobs are dead with %s', g.operation, coalesce(g.last_error_code, 'no error code')), NULL, g.n)
  FROM (SELECT tenant_id, connection_id, operation, last_error_code, count(*)::int AS n
        FROM unnest(dead) GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4) g
$$;

-- Jobs that succeeded after failing (a replay): the alert of each group resolves once no job of the group is dead.
CREATE FUNCTION jobs_recovered_alerts(recovered jobs[]) RETURNS void LANGUAGE sql AS $$
  SELECT alert_clear(g.tenant_id, 'job.dead', g.connection_id, g.operation, g.last_error_code)
  FROM (SELECT DISTINCT tenant_id, connection_id, operation, last_error_code FROM unnest(recovered) ORDER BY 1, 2, 3, 4) g
  WHERE EXISTS (SELECT 1 FROM alerts WHERE tenant_id = g.tenant_id AND status <> 'resolved'
                  AND group_key = alert_group_key('job.dead', g.connection_id, g.operation, g.last_error_code))
    AND NOT EXISTS (SELECT 1 FROM jobs WHERE tenant_id = g.tenant_id AND connection_id IS NOT DISTINCT FROM g.connection_id
                      AND operation = g.operation AND status = 'dead' AND last_error_code = g.last_error_code)
$$;

-- Notifications raise nothing themselves (a failing channel must not notify about itself).
CREATE FUNCTION jobs_alerts() RETURNS trigger LANGUAGE plpgsql AS E'DECLARE dead jobs[]\x3b recovered jobs[]\x3b BEGIN SELECT array_agg(n) FILTER (WHERE n.status = ''dead''), array_agg(n) FILTER (WHERE n.status = ''succeeded'') INTO dead, recovered FROM new_jobs n JOIN old_jobs o ON o.id = n.id WHERE n.status IS DISTINCT FROM o.status AND n.operation <> ''notification'' AND (n.status = ''dead'' OR (n.status = ''succeeded'' AND n.last_error_code IS NOT NULL))\x3b IF dead IS NOT NULL THEN PERFORM jobs_dead_alerts(dead)\x3b END IF\x3b IF recovered IS NOT NULL THEN PERFORM jobs_recovered_alerts(recovered)\x3b END IF\x3b RETURN NULL\x3b END';
CREATE TRIGGER jobs_alerts AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION jobs_alerts();
