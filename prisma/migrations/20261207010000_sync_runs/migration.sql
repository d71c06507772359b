-- Runs of POST /admin/connections/{id}/sync (issue 28).

-- CreateTable: one run of POST /admin/connections/{id}/sync (its registration and reconciliation jobs).
CREATE TABLE "sync_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "api_key_id" UUID,
    "registration_job_id" UUID,
    "reconciliation_job_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sync_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: the connection's newest run (a call joins it) and its runs of the last 60 s (the limit).
CREATE INDEX "sync_runs_tenant_id_connection_id_created_at_idx" ON "sync_runs"("tenant_id", "connection_id", "created_at" DESC);
