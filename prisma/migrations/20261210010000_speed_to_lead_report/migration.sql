-- GET /admin/speed-to-lead: a tenant's leads by the provider's time of the lead (its row's creation
-- where none), with every column the report reads, so the window is one index-only range scan
-- (docs/benchmarks.md "Speed to lead"). The expression is the report's own, to the letter.
CREATE INDEX "leads_speed_to_lead_idx" ON "leads" ("tenant_id", (COALESCE("provider_created_at", "created_at")))
  INCLUDE ("connection_id", "provider", "first_response_by", "first_response_seconds",
           "first_response_business_seconds", "provider_created_at", "created_at");
