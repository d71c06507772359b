-- Provider-side webhook registration (issue 14, part 1). Existing connections were registered by
-- hand, if at all: they start `manual`.

-- AlterTable
ALTER TABLE "connections" ADD COLUMN     "registration_status" TEXT NOT NULL DEFAULT 'manual',
ADD COLUMN     "registration_webhook_id" TEXT,
ADD COLUMN     "registration_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "registration_synced_at" TIMESTAMPTZ(3),
ADD COLUMN     "registration_last_error" TEXT,
ADD COLUMN     "registration_due_at" TIMESTAMPTZ(3),
ADD COLUMN     "registration_seq" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "connections_registration_due_at_idx" ON "connections"("registration_due_at");

-- Closed vocabularies (hand-written, as in the init migration): the new operation, the registration statuses.
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_operation_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_operation_check" CHECK ("operation" IN ('lead-upsert', 'initial-response', 'crm-delivery', 'provider-sync'));
ALTER TABLE "connections" ADD CONSTRAINT "connections_registration_status_check" CHECK ("registration_status" IN ('active', 'pending', 'error', 'manual'));
