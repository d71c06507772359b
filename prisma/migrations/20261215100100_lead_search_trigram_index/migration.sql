-- GET /admin/leads?q= (src/leads/lead-reads.ts): one trigram GIN index over the four columns the
-- search matches, so each arm of its OR is a bitmap scan of this index (a term of 3 characters or
-- more: a shorter one has no trigram and reads the tenant's leads newest first, as before).
-- CONCURRENTLY: writes to leads go on while it is built (a large table takes seconds to minutes).
-- It must be the only statement of its migration: it cannot run inside a transaction block, and a
-- migration that fails half way must not leave other statements applied. A build that fails leaves
-- an INVALID index behind: drop it (DROP INDEX CONCURRENTLY leads_search_trgm_idx), then mark the
-- migration rolled back (prisma migrate resolve --rolled-back) and migrate again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "leads_search_trgm_idx" ON "leads" USING gin ("name" gin_trgm_ops, "email" gin_trgm_ops, "phone" gin_trgm_ops, "external_lead_id" gin_trgm_ops);
