-- Revoking an API key ends the pending OAuth attempts it started, in the same transaction
-- (src/auth/api-keys.repository.ts revoke): this index finds them.
-- CreateIndex
CREATE INDEX "oauth_attempts_api_key_id_idx" ON "oauth_attempts"("api_key_id");

