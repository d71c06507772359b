// SQL pieces that several of the job state machine's statements share (src/jobs/state/*.ts):
// per-operation parameters and sub-expressions over a job row. Their text is part of statements
// that SqlBatch prepares by text: change it only on purpose.
import { OPERATION_SETTINGS } from "../operations.js";

/** The operation each operation runs after, as a jsonb parameter (`$n::jsonb ->> operation`: null for none). */
export const AFTER = JSON.stringify(
  Object.fromEntries(
    Object.entries(OPERATION_SETTINGS).map(([op, settings]) => [op, settings.after ?? null]),
  ),
);

/** The status of the side-effect record under the key of the job `alias` (an SQL expression). */
export const SIDE_EFFECT_OF = (alias: string) =>
  `(SELECT s.status FROM side_effects s WHERE s.job_key = ${alias}.job_key AND s.tenant_id = ${alias}.tenant_id)`;

/**
 * The columns of the connection of the job `alias` that may change while a job runs (ContextRow's
 * names), as they are now: a job claimed by its dependency's success runs with them (an SQL expression).
 */
export const CONNECTION_NOW = (
  alias: string,
) => `(SELECT json_build_object('status', c.status, 'settings', c.settings,
    'client_defaults', (SELECT cl.defaults FROM clients cl WHERE cl.id = c.client_id),
    'tenant_defaults', (SELECT t.defaults FROM tenants t WHERE t.id = c.tenant_id), 'display_name', c.display_name,
    'credentials', c.credentials, 'crm_signing_secret', c.crm_signing_secret,
    'previous_crm_signing_secret', CASE WHEN c.previous_crm_signing_secret_expire_at > now()
                                        THEN c.previous_crm_signing_secret END)
  FROM connections c WHERE c.id = ${alias}.connection_id AND c.tenant_id = ${alias}.tenant_id)`;

/** An attempt's duration until now, from its start (an SQL expression). */
export const DURATION_MS = (startedAt: string) => `(extract(epoch FROM now() - ${startedAt}) * 1000)::int`;

/**
 * Writes the attempt rows of the jobs a batch statement moved to any status but `succeeded` (a
 * succeeded job's last attempt is on its row: SUCCEEDED_ATTEMPT) (CTEs `input` i and `moved` m, with
 * id, tenant_id, created_at, attempts and attempt_started_at), ended now with `outcome` and `errorCode` (SQL
 * expressions over i). A row of the same number that an earlier version opened at its claim is closed.
 */
export const WRITE_ATTEMPTS = (outcome: string, errorCode: string) => `INSERT INTO job_attempts AS a
    (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome, error_code, duration_ms)
  SELECT m.tenant_id, m.id, m.created_at, m.attempts, m.attempt_started_at, now(), ${outcome}, ${errorCode},
         ${DURATION_MS("m.attempt_started_at")}
  FROM input i JOIN moved m ON m.id = i.id
  ON CONFLICT (job_id, number, job_created_at) DO UPDATE SET finished_at = excluded.finished_at, outcome = excluded.outcome,
    error_code = excluded.error_code, duration_ms = ${DURATION_MS("a.started_at")}`;

/**
 * A success writes no attempt row: the job row holds its last attempt (number `attempts`, from
 * `attempt_started_at` to `completed_at`), and the job view reads it from there. This writes that
 * row when a job leaves `succeeded` (a forced replay), for the jobs of CTE `requeued` (with id):
 * read from `jobs` in the statement's snapshot, which a CTE's own UPDATE does not change, so as the
 * jobs were before it. The caller must hold the jobs' row locks before the statement (as
 * ReplayService.replayJob's lockJob does): otherwise the UPDATE could requeue a newer version of a
 * job than the snapshot holds, and its last success would be lost. A row an earlier version wrote
 * at the success is kept.
 */
export const SUCCEEDED_ATTEMPT = (requeued: string) => `INSERT INTO job_attempts AS a
    (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome, duration_ms)
  SELECT j.tenant_id, j.id, j.created_at, j.attempts, j.attempt_started_at, j.completed_at, 'succeeded',
         (extract(epoch FROM j.completed_at - j.attempt_started_at) * 1000)::int
  FROM jobs j JOIN ${requeued} r ON r.id = j.id
  WHERE j.status = 'succeeded' AND j.attempt_started_at IS NOT NULL AND j.completed_at IS NOT NULL
  ON CONFLICT (job_id, number, job_created_at) DO UPDATE SET finished_at = excluded.finished_at, outcome = excluded.outcome,
    duration_ms = excluded.duration_ms
  WHERE a.finished_at IS NULL`;
