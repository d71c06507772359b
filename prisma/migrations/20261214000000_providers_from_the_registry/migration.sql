-- Providers are plugins (src/providers/plugins.ts): the list of providers lives in the registry, not
-- in the database. The CHECK lists that restated it are dropped, so adding a provider is its folder,
-- one line and only the migration its own tables need. Every provider value is written by code typed
-- by the registry's vocabulary (a closed union), and the admin API validates it against the registry.
ALTER TABLE "connections" DROP CONSTRAINT IF EXISTS "connections_provider_check";
ALTER TABLE "receipts" DROP CONSTRAINT IF EXISTS "receipts_provider_check";
ALTER TABLE "leads" DROP CONSTRAINT IF EXISTS "leads_provider_check";
ALTER TABLE "oauth_attempts" DROP CONSTRAINT IF EXISTS "oauth_attempts_provider_check";
