-- Speed to lead (api.md "First replies: templates, business hours, speed to lead").
ALTER TABLE "leads"
  -- Leadgate's first receipt of the lead, and the provider's time of its first event.
  ADD COLUMN "received_at" TIMESTAMPTZ(3),
  ADD COLUMN "provider_created_at" TIMESTAMPTZ(3),
  -- The first message to the customer: Leadgate's auto-reply or the business's own. Set once, only
  -- ever corrected to an earlier one (LeadsRepository.recordFirstResponse), the seconds count from
  -- provider_created_at, on the wall clock and inside the connection's business hours.
  ADD COLUMN "first_response_at" TIMESTAMPTZ(3),
  ADD COLUMN "first_response_by" TEXT,
  ADD COLUMN "first_response_seconds" DOUBLE PRECISION,
  ADD COLUMN "first_response_business_seconds" DOUBLE PRECISION,
  -- In the scope of lead.unanswered: a Yelp or Thumbtack lead that arrived fresh (by webhook or
  -- reconciliation, younger than RECONCILE_REPLY_MAX_AGE_SECONDS), not a backfill nor Static Forms.
  ADD COLUMN "awaits_response" BOOLEAN NOT NULL DEFAULT false,
  ADD CONSTRAINT "leads_first_response_by_check" CHECK ("first_response_by" IN ('auto', 'business')),
  ADD CONSTRAINT "leads_first_response_check" CHECK (("first_response_at" IS NULL) = ("first_response_by" IS NULL));

-- Leads stored before: the creation of their row stands for both times.
UPDATE "leads" SET "received_at" = "created_at", "provider_created_at" = "created_at";
