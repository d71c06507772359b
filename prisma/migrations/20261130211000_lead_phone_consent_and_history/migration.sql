-- Phone consent (Yelp's CONSUMER_PHONE_NUMBER_OPT_IN/OUT events) and the time of the event that set it,
-- so an older consent event never overrides a newer one.
ALTER TABLE "leads" ADD COLUMN "phone_consent" BOOLEAN,
ADD COLUMN "phone_consent_at" TIMESTAMPTZ(3),
-- The provider's event history is stored back to its first event.
ADD COLUMN "history_complete" BOOLEAN NOT NULL DEFAULT false;

-- A message's place in the provider's event list (newest highest) and its paging cursor.
ALTER TABLE "lead_messages" ADD COLUMN "position" INTEGER,
ADD COLUMN "cursor" TEXT;
