-- Speed to lead, the alert and the provider call (api.md "First replies: templates, business hours,
-- speed to lead"): the alert type lead.unanswered, the operation provider-mark-replied, and the
-- index of the unanswered-lead sweep (src/alerts/unanswered-sweep.ts).
ALTER TABLE "alerts" DROP CONSTRAINT "alerts_type_check";
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_type_check" CHECK ("type" IN ('connection.reauthorization_required', 'connection.credential_error', 'job.dead', 'registration.error', 'webhooks.missing', 'connection.silent', 'destination.failing', 'payload.conflict', 'lead.unanswered'));
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_operation_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_operation_check" CHECK ("operation" IN ('lead-upsert', 'initial-response', 'crm-delivery', 'provider-sync', 'reconciliation', 'notification', 'provider-mark-replied'));

-- The sweep reads only the leads still waiting for their first response, by the time they were
-- created at the provider (else received), within its age bound: few rows, whatever the history.
CREATE INDEX "leads_unanswered_since" ON "leads" ((COALESCE("provider_created_at", "received_at")))
  WHERE "awaits_response" AND "first_response_at" IS NULL;
