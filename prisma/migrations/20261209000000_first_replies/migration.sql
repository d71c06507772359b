-- First replies (api.md "First replies: templates, business hours, speed to lead").

-- A tenant's defaults: the reply settings (autoResponse, businessHours, responseTarget) every
-- connection of the tenant inherits unless it sets its own.
ALTER TABLE "tenants" ADD COLUMN "defaults" JSONB NOT NULL DEFAULT '{}';

-- Merge fields the lead lacked: {{lead.firstName}} and {{lead.service}}.
ALTER TABLE "leads" ADD COLUMN "first_name" TEXT, ADD COLUMN "service" TEXT;

-- What a side effect sends, stored before its first call (the first reply's rendered text and
-- variant), so a retry after an unknown outcome looks for exactly that.
ALTER TABLE "side_effects" ADD COLUMN "request" JSONB;

-- A first reply waits its delay (`waitingFor: "delay"`), using no attempt.
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_waiting_for_check";
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_waiting_for_check" CHECK (("status" = 'waiting') = ("waiting_for" IS NOT NULL) AND ("waiting_for" IS NULL OR "waiting_for" IN ('dependency', 'quota', 'circuit', 'delay')));
