-- Who created each API key (api.md "Console and users": key views carry createdBy): a console user
-- or another API key, so that disabling a user may revoke the keys it created (revokeKeys=true).
ALTER TABLE "api_keys" ADD COLUMN     "created_by_key_id" UUID,
ADD COLUMN     "created_by_user_id" UUID;

-- Serves DELETE /admin/users/{id}?revokeKeys=true: the unrevoked keys a user created.
CREATE INDEX "api_keys_created_by_user_id_idx" ON "api_keys"("created_by_user_id");

-- A key is created by a user or by a key, never both (the bootstrap key: by neither).
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_created_by_check" CHECK ("created_by_user_id" IS NULL OR "created_by_key_id" IS NULL);

-- Existing keys: their creator as the audit log recorded it, while it still holds the entry
-- (api-key.create names the key, tenant.create names the tenant's first key in its details).
UPDATE "api_keys" k SET "created_by_user_id" = a."user_id", "created_by_key_id" = a."api_key_id"
FROM "audit_entries" a
WHERE k."created_by_user_id" IS NULL AND k."created_by_key_id" IS NULL
  AND ((a."action" = 'api-key.create' AND a."target_id" = k."id"::text)
    OR (a."action" = 'tenant.create' AND a."details"->>'apiKeyId' = k."id"::text))
  AND (a."user_id" IS NULL OR a."api_key_id" IS NULL);
