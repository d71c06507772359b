-- Reconciliation, backfill and missed-webhook detection (issue 14, parts 2-4).

-- AlterTable: how each event reached Leadgate.
ALTER TABLE "receipts" ADD COLUMN "source" TEXT NOT NULL DEFAULT 'webhook';
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_source_check" CHECK ("source" IN ('webhook', 'reconcile', 'backfill'));

-- AlterTable: each connection's reconciliation schedule and last outcome.
ALTER TABLE "connections" ADD COLUMN "reconcile_status" TEXT,
ADD COLUMN "reconcile_tick" BIGINT,
ADD COLUMN "reconcile_last_run_at" TIMESTAMPTZ(3),
ADD COLUMN "reconcile_leads_found" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "reconcile_missed" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "reconcile_last_error" TEXT;

-- CreateTable
CREATE TABLE "backfills" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "api_key_id" UUID,
    "job_id" UUID,
    "window_from" TIMESTAMPTZ(3) NOT NULL,
    "window_to" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "matched" INTEGER NOT NULL DEFAULT 0,
    "ingested" INTEGER NOT NULL DEFAULT 0,
    "duplicates" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "backfills_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "backfills_status_check" CHECK ("status" IN ('running', 'done', 'failed'))
);

-- CreateIndex: the processor finds its backfill by job.
CREATE INDEX "backfills_job_id_idx" ON "backfills"("job_id");

-- At most one running backfill per connection: the second insert fails (409 backfill_in_progress).
CREATE UNIQUE INDEX "backfills_one_running" ON "backfills"("connection_id") WHERE "status" = 'running';

-- The new operation: a connection's reconciliation run or backfill.
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_operation_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_operation_check" CHECK ("operation" IN ('lead-upsert', 'initial-response', 'crm-delivery', 'provider-sync', 'reconciliation'));
