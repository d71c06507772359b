-- DropIndex
DROP INDEX "connections_provider_external_account_id_key";

-- AlterTable
ALTER TABLE "connections" ADD COLUMN     "last_refreshed_at" TIMESTAMPTZ(3),
ADD COLUMN     "oauth_last_error" TEXT,
ADD COLUMN     "oauth_scopes" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "oauth_status" TEXT NOT NULL DEFAULT 'not_connected',
ADD COLUMN     "refresh_lease_owner" UUID,
ADD COLUMN     "refresh_lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "cleanup_due_at" TIMESTAMPTZ(3),
ADD COLUMN     "token_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "token_issued_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "oauth_attempts" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "connection_id" UUID,
    "state_hash" TEXT NOT NULL,
    "code_verifier" TEXT NOT NULL,
    "fields" JSONB NOT NULL,
    "return_url" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "consumed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "oauth_attempts_state_hash_key" ON "oauth_attempts"("state_hash");

-- CreateIndex
CREATE INDEX "connections_provider_external_account_id_idx" ON "connections"("provider", "external_account_id");

-- AddForeignKey
ALTER TABLE "oauth_attempts" ADD CONSTRAINT "oauth_attempts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- One provider account, one connection among those not disabled (hand-written: Prisma cannot model a
-- partial index). A disabled connection releases its account, and the plain index above serves routing
-- lookups that also see disabled rows (a Yelp delivery for a disabled business answers 410).
CREATE UNIQUE INDEX "connections_provider_external_account_id_active_key" ON "connections"("provider", "external_account_id") WHERE "status" <> 'disabled';

-- Closed vocabularies.
ALTER TABLE "connections" ADD CONSTRAINT "connections_oauth_status_check" CHECK ("oauth_status" IN ('connected', 'reauthorization_required', 'not_connected'));
ALTER TABLE "oauth_attempts" ADD CONSTRAINT "oauth_attempts_provider_check" CHECK ("provider" IN ('thumbtack', 'yelp'));

-- Connections made with pasted credentials before this migration hold a token: connected.
UPDATE "connections" SET "oauth_status" = 'connected' WHERE "credentials" IS NOT NULL;
