-- Provider-side webhook registration (issue 14, part 1). Connections start `manual` (registered by
-- hand, if at all), and those connected through OAuth are then made `pending`, below, so the workers
-- registration sweep registers them.

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

-- Live connections made or re-granted through OAuth (their audit rows say so), with an inbound auth
-- Leadgate can give the provider (src/connections/registration.ts registeredByLeadgate): the sweep
-- registers them (registration_due_at NULL: due now).
UPDATE "connections" SET "registration_status" = 'pending'
WHERE "status" <> 'disabled' AND "credentials" IS NOT NULL
  AND ("provider" = 'yelp' OR ("provider" = 'thumbtack' AND "inbound_auth" ->> 'type' IN ('basic', 'token')))
  AND "id"::text IN (SELECT "target_id" FROM "audit_entries"
                     WHERE "action" IN ('connection.oauth-connect', 'connection.reconnect'));
