-- GET /admin/speed-to-lead: the leads of a tenant by the provider time of the lead (the row creation
-- where none), with every column the report reads, so the window is one index-only range scan
-- (docs/benchmarks.md, Speed to lead). The key expression is the one of the report, to the letter.
CREATE INDEX "leads_speed_to_lead_idx" ON "leads" ("tenant_id", (COALESCE("provider_created_at", "created_at")))
  INCLUDE ("connection_id", "provider", "first_response_by", "first_response_seconds",
           "first_response_business_seconds", "provider_created_at", "created_at");
