-- A receipt's jobs are always looked up with their tenant: one index on both answers the lookup in
-- one scan (the dependency checks of every claim and success), where the planner of a young table
-- otherwise combined the receipt index with the tenant index and read every job of the tenant.
CREATE INDEX "jobs_receipt_id_tenant_id_idx" ON "jobs"("receipt_id", "tenant_id");
DROP INDEX "jobs_receipt_id_idx";
