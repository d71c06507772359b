-- People who sign in to the console (api.md "Console and users"): users, their invitations and
-- their sessions. Tokens are stored as sha256 (hex) only. An e-mail is kept in lower case, so the
-- unique index makes it unique case-insensitively.
CREATE TABLE "users" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "tenant_id" UUID,
    "password_hash" TEXT,
    "disabled_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "users_email_lower_check" CHECK ("email" = lower("email")),
    CONSTRAINT "users_role_check" CHECK ("role" IN ('operator', 'tenant-admin', 'tenant-viewer')),
    CONSTRAINT "users_tenant_check" CHECK (("role" = 'operator') = ("tenant_id" IS NULL))
);
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");
CREATE INDEX "users_tenant_id_idx" ON "users"("tenant_id");
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A new invitation voids the user's older ones (voided_at).
CREATE TABLE "user_invitations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "user_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "voided_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "user_invitations_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "user_invitations_token_hash_key" ON "user_invitations"("token_hash");
CREATE INDEX "user_invitations_user_id_idx" ON "user_invitations"("user_id");
ALTER TABLE "user_invitations" ADD CONSTRAINT "user_invitations_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A session ends after 12 h idle or 7 days in all (src/users/sessions.repository.ts), or when revoked.
CREATE TABLE "sessions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "token_hash" TEXT NOT NULL,
    "csrf_token" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"("token_hash");
CREATE INDEX "sessions_user_id_idx" ON "sessions"("user_id");
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- API keys may be read-only too.
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_role_check";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_role_check" CHECK ("role" IN ('operator', 'tenant-admin', 'tenant-viewer'));

-- Who acted: an API key or a user.
ALTER TABLE "audit_entries" ADD COLUMN "user_id" UUID;
ALTER TABLE "oauth_attempts" ALTER COLUMN "api_key_id" DROP NOT NULL;
ALTER TABLE "oauth_attempts" ADD COLUMN "user_id" UUID;
ALTER TABLE "oauth_attempts" ADD CONSTRAINT "oauth_attempts_started_by_check" CHECK (("api_key_id" IS NULL) <> ("user_id" IS NULL));
CREATE INDEX "oauth_attempts_user_id_idx" ON "oauth_attempts"("user_id");
