-- Alerts and notification channels (api.md "Alerts and notification channels").
--
-- An alert is opened, counted and resolved by the statement that records its cause, through the
-- triggers below: a job going dead (jobs), a connection status or grant (connections), a
-- destination circuit opening and closing (destination_circuit_openings), a payload conflict
-- (payload_conflicts). Each fires in the transaction of that statement, so no cause is recorded
-- without its alert, and a rolled-back cause leaves no alert. Conditions found outside Postgres
-- (a silent connection, and for issue 14 registration.error / webhooks.missing) call
-- alert_raise / alert_clear through src/alerts/alert-book.ts.

-- CreateTable
CREATE TABLE "alerts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "connection_id" UUID,
    "operation" TEXT,
    "error_code" TEXT,
    "subject" TEXT,
    "group_key" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 1,
    "summary" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "acknowledged_at" TIMESTAMPTZ(3),
    "resolved_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alerts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notification_channels" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID,
    "type" TEXT NOT NULL,
    "url" TEXT,
    "address" TEXT,
    "types" TEXT[],
    "secrets" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notification_channels_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "alerts_tenant_id_first_seen_at_id_idx" ON "alerts"("tenant_id", "first_seen_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "alerts_first_seen_at_id_idx" ON "alerts"("first_seen_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "alerts_subject_idx" ON "alerts"("subject");

-- CreateIndex
CREATE INDEX "notification_channels_tenant_id_created_at_id_idx" ON "notification_channels"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "receipts_connection_id_received_at_idx" ON "receipts"("connection_id", "received_at" DESC);

-- AddForeignKey
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notification_channels" ADD CONSTRAINT "notification_channels_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Closed vocabularies.
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_type_check" CHECK ("type" IN ('connection.reauthorization_required', 'connection.credential_error', 'job.dead', 'registration.error', 'webhooks.missing', 'connection.silent', 'destination.failing', 'payload.conflict'));
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_status_check" CHECK ("status" IN ('open', 'acknowledged', 'resolved'));
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_resolved_check" CHECK (("status" = 'resolved') = ("resolved_at" IS NOT NULL));
ALTER TABLE "notification_channels" ADD CONSTRAINT "notification_channels_type_check" CHECK ("type" IN ('webhook', 'slack', 'email'));
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_operation_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_operation_check" CHECK ("operation" IN ('lead-upsert', 'initial-response', 'crm-delivery', 'provider-sync', 'reconciliation', 'notification'));

-- The race decider: at most one unresolved alert per group (a repeat counts on it: once it is
-- resolved, the next occurrence opens a new alert).
CREATE UNIQUE INDEX "alerts_unresolved_group_key" ON "alerts"("tenant_id", "group_key") WHERE "status" <> 'resolved';

-- How this file is written: Prisma applies a migration split at every semicolon, so each function
-- is one SQL statement (LANGUAGE sql), and each trigger is a one-line PL/pgSQL shell written as an
-- E string with \x3b for its semicolons, which calls them.

-- The group of an alert: (type, connection, operation, error code).
CREATE FUNCTION alert_group_key(p_type text, p_connection uuid, p_operation text, p_error_code text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT concat_ws('|', p_type, coalesce(p_connection::text, ''), coalesce(p_operation, ''), coalesce(p_error_code, ''))
$$;

-- One occurrence of a condition: opens the group alert, or counts on the unresolved one. One
-- statement. Answers the alert id.
CREATE FUNCTION alert_raise(p_tenant uuid, p_type text, p_connection uuid, p_operation text,
                            p_error_code text, p_summary text, p_subject text DEFAULT NULL)
RETURNS uuid LANGUAGE sql AS $$
  INSERT INTO alerts AS a (tenant_id, type, connection_id, operation, error_code, subject, group_key, summary)
  VALUES (p_tenant, p_type, p_connection, p_operation, p_error_code, p_subject,
          alert_group_key(p_type, p_connection, p_operation, p_error_code), p_summary)
  ON CONFLICT (tenant_id, group_key) WHERE status <> 'resolved'
  DO UPDATE SET count = a.count + 1, last_seen_at = now(), updated_at = now()
  RETURNING id
$$;

-- The condition cleared: resolves the unresolved alerts of the tenant (any tenant when null) of
-- this type that match every other argument given (a null argument matches anything). Answers how many.
CREATE FUNCTION alert_clear(p_tenant uuid, p_type text, p_connection uuid DEFAULT NULL, p_operation text DEFAULT NULL,
                            p_error_code text DEFAULT NULL, p_subject text DEFAULT NULL)
RETURNS int LANGUAGE sql AS $$
  WITH resolved AS (
    UPDATE alerts SET status = 'resolved', resolved_at = now(), updated_at = now()
    WHERE (p_tenant IS NULL OR tenant_id = p_tenant) AND type = p_type AND status <> 'resolved'
      AND (p_connection IS NULL OR connection_id = p_connection)
      AND (p_operation IS NULL OR operation = p_operation)
      AND (p_error_code IS NULL OR error_code = p_error_code)
      AND (p_subject IS NULL OR subject = p_subject)
    RETURNING 1
  )
  SELECT count(*)::int FROM resolved
$$;

-- Notifications: one keyed job per channel when an alert opens and one when it resolves, created
-- with the alert (src/alerts/notification-key.ts reads the key: 8 = OPERATION_SETTINGS.notification.attempts).
-- The tenant channels and the platform channels (tenant_id null), filtered by their types.
CREATE FUNCTION alert_notify(a alerts, transition text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO jobs (tenant_id, alert_id, operation, job_key, status, max_attempts)
  SELECT a.tenant_id, a.id, 'notification', 'notification:' || a.id || '.' || ch.id || '.' || transition, 'queued', 8
  FROM notification_channels ch
  WHERE (ch.tenant_id = a.tenant_id OR ch.tenant_id IS NULL) AND (ch.types IS NULL OR a.type = ANY (ch.types))
  ORDER BY ch.id
  ON CONFLICT (job_key) DO NOTHING
$$;
CREATE FUNCTION alerts_opened() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM alert_notify(NEW, ''opened'')\x3b RETURN NULL\x3b END';
CREATE FUNCTION alerts_resolved() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM alert_notify(NEW, ''resolved'')\x3b RETURN NULL\x3b END';
CREATE TRIGGER alerts_opened AFTER INSERT ON alerts FOR EACH ROW EXECUTE FUNCTION alerts_opened();
CREATE TRIGGER alerts_resolved AFTER UPDATE OF status ON alerts FOR EACH ROW
  WHEN (NEW.status = 'resolved' AND OLD.status <> 'resolved') EXECUTE FUNCTION alerts_resolved();

-- job.dead: a job going dead counts on its group alert (one statement per dead job). A job that
-- succeeds after failing (a replay) resolves its group alert once no job of the group is dead.
-- Notifications raise nothing themselves (a failing channel must not notify about itself).
CREATE FUNCTION job_alerts(j jobs) RETURNS void LANGUAGE sql AS $$
  SELECT CASE WHEN j.status = 'dead' THEN
           alert_raise(j.tenant_id, 'job.dead', j.connection_id, j.operation, j.last_error_code,
             format('%s jobs are dead with %s', j.operation, coalesce(j.last_error_code, 'no error code')))::text
         WHEN EXISTS (SELECT 1 FROM alerts WHERE tenant_id = j.tenant_id AND status <> 'resolved'
                        AND group_key = alert_group_key('job.dead', j.connection_id, j.operation, j.last_error_code))
          AND NOT EXISTS (SELECT 1 FROM jobs WHERE tenant_id = j.tenant_id AND connection_id IS NOT DISTINCT FROM j.connection_id
                            AND operation = j.operation AND status = 'dead' AND last_error_code = j.last_error_code) THEN
           alert_clear(j.tenant_id, 'job.dead', j.connection_id, j.operation, j.last_error_code)::text
         END
$$;
CREATE FUNCTION jobs_alerts() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM job_alerts(NEW)\x3b RETURN NULL\x3b END';
CREATE TRIGGER jobs_alerts AFTER UPDATE OF status ON jobs FOR EACH ROW
  WHEN (NEW.status IS DISTINCT FROM OLD.status AND NEW.operation <> 'notification'
        AND (NEW.status = 'dead' OR (NEW.status = 'succeeded' AND NEW.last_error_code IS NOT NULL)))
  EXECUTE FUNCTION jobs_alerts();

-- connection.reauthorization_required (the provider refused the refresh token) and
-- connection.credential_error (the provider refused the credentials otherwise): opened by the
-- status change, resolved when it ends (a reconnect or a resume). Disabling a connection resolves
-- its connection alerts.
CREATE FUNCTION connection_alerts(n connections, o connections) RETURNS void LANGUAGE sql AS $$
  SELECT
    CASE WHEN n.oauth_status = 'reauthorization_required' AND o.oauth_status <> 'reauthorization_required' AND n.status <> 'disabled' THEN
           alert_raise(n.tenant_id, 'connection.reauthorization_required', n.id, NULL, NULL,
             format('Connection "%s" (%s %s) must be reconnected: the provider refused its grant (%s).',
                    n.display_name, n.provider, n.external_account_id, coalesce(n.oauth_last_error, 'invalid_grant')))::text
         WHEN o.oauth_status = 'reauthorization_required' AND n.oauth_status <> 'reauthorization_required' THEN
           alert_clear(n.tenant_id, 'connection.reauthorization_required', n.id)::text
    END,
    CASE WHEN n.status = 'credential_error' AND o.status <> 'credential_error' AND n.oauth_status <> 'reauthorization_required' THEN
           alert_raise(n.tenant_id, 'connection.credential_error', n.id, NULL, NULL,
             format('Connection "%s" (%s %s): the provider refused its credentials. Its provider calls wait until it is resumed or reconnected.',
                    n.display_name, n.provider, n.external_account_id))::text
         WHEN o.status = 'credential_error' AND n.status <> 'credential_error' THEN
           alert_clear(n.tenant_id, 'connection.credential_error', n.id)::text
    END,
    CASE WHEN n.status = 'disabled' AND o.status <> 'disabled' THEN
           alert_clear(n.tenant_id, 'connection.reauthorization_required', n.id)
           + alert_clear(n.tenant_id, 'connection.credential_error', n.id)
           + alert_clear(n.tenant_id, 'connection.silent', n.id)
    END
$$;
CREATE FUNCTION connections_alerts() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM connection_alerts(NEW, OLD)\x3b RETURN NULL\x3b END';
CREATE TRIGGER connections_alerts AFTER UPDATE OF status, oauth_status ON connections FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.oauth_status IS DISTINCT FROM NEW.oauth_status)
  EXECUTE FUNCTION connections_alerts();

-- destination.failing: a circuit opening raises it for every live connection whose CRM destination
-- is on that origin (scheme://host[:port] as URL.origin writes it). The circuit closing resolves them.
CREATE FUNCTION circuit_opened(d destination_circuit_openings) RETURNS void LANGUAGE sql AS $$
  SELECT alert_raise(c.tenant_id, 'destination.failing', c.id, 'crm-delivery', 'circuit_open',
           format('The CRM destination %s of connection "%s" keeps failing (%s consecutive failures, last: %s). Its deliveries wait for it.',
                  d.origin, c.display_name, d.failures, coalesce(d.last_error, 'unknown')), d.origin)
  FROM connections c
  WHERE c.status <> 'disabled'
    AND lower(substring(c.settings #>> '{crmDestination,url}' FROM '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+')) = lower(d.origin)
  ORDER BY c.tenant_id, c.id
$$;
CREATE FUNCTION circuit_openings_opened() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM circuit_opened(NEW)\x3b RETURN NULL\x3b END';
CREATE FUNCTION circuit_openings_closed() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM alert_clear(NULL, ''destination.failing'', NULL, NULL, NULL, NEW.origin)\x3b RETURN NULL\x3b END';
CREATE TRIGGER circuit_openings_opened AFTER INSERT ON destination_circuit_openings FOR EACH ROW
  EXECUTE FUNCTION circuit_openings_opened();
CREATE TRIGGER circuit_openings_closed AFTER UPDATE OF closed_at ON destination_circuit_openings FOR EACH ROW
  WHEN (NEW.closed_at IS NOT NULL AND OLD.closed_at IS NULL) EXECUTE FUNCTION circuit_openings_closed();

-- payload.conflict: a provider sent different content under an event identity already received.
-- Resolved by hand (nothing clears it by itself).
CREATE FUNCTION payload_conflict_alert(p payload_conflicts) RETURNS void LANGUAGE sql AS $$
  SELECT alert_raise(r.tenant_id, 'payload.conflict', r.connection_id, NULL, 'digest_mismatch',
           format('A %s event arrived again with different content (receipt %s). The first version was kept.', r.provider, r.id))
  FROM receipts r WHERE r.id = p.receipt_id AND r.tenant_id = p.tenant_id
$$;
CREATE FUNCTION payload_conflicts_alerts() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN PERFORM payload_conflict_alert(NEW)\x3b RETURN NULL\x3b END';
CREATE TRIGGER payload_conflicts_alerts AFTER INSERT ON payload_conflicts FOR EACH ROW
  EXECUTE FUNCTION payload_conflicts_alerts();
