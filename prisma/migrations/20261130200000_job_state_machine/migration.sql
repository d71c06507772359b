-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "alert_id" UUID,
ADD COLUMN     "waiting_for" TEXT,
ADD COLUMN     "waiting_since" TIMESTAMPTZ(3),
ALTER COLUMN "connection_id" DROP NOT NULL,
ALTER COLUMN "receipt_id" DROP NOT NULL;


-- The job state machine (src/jobs/state): the new status, why a job waits, and who a job belongs to.
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_status_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_status_check" CHECK ("status" IN ('queued', 'running', 'retrying', 'waiting', 'succeeded', 'dead', 'blocked', 'held', 'cancelled'));
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_waiting_for_check" CHECK (("status" = 'waiting') = ("waiting_for" IS NOT NULL) AND ("waiting_for" IS NULL OR "waiting_for" IN ('dependency', 'quota', 'circuit')));
-- An event's job names its receipt and connection, a connection's job its connection, an alert's job its alert.
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_owner_check" CHECK (("receipt_id" IS NULL OR "connection_id" IS NOT NULL) AND ("receipt_id" IS NOT NULL OR "connection_id" IS NOT NULL OR "alert_id" IS NOT NULL));
