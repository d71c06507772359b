-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "tenants" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connections" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "external_account_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "inbound_auth" JSONB NOT NULL,
    "inbound_secrets" TEXT,
    "previous_secrets" TEXT,
    "previous_secrets_expire_at" TIMESTAMPTZ(3),
    "credentials" TEXT,
    "settings" JSONB NOT NULL DEFAULT '{}',
    "crm_signing_secret" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),

    CONSTRAINT "connections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "receipts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "event_id" TEXT,
    "lead_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "payload_digest" TEXT NOT NULL,
    "raw_payload" JSONB,
    "payload_purged_at" TIMESTAMPTZ(3),
    "duplicate_count" INTEGER NOT NULL DEFAULT 0,
    "last_duplicate_at" TIMESTAMPTZ(3),
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "receipt_id" UUID NOT NULL,
    "operation" TEXT NOT NULL,
    "job_key" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error_code" TEXT,
    "last_error_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "job_attempts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "number" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "outcome" TEXT,
    "error_code" TEXT,
    "duration_ms" INTEGER,

    CONSTRAINT "job_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leads" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "external_lead_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "name" TEXT,
    "email" TEXT,
    "phone" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "last_event_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "lead_messages" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "lead_id" UUID NOT NULL,
    "external_id" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "author" TEXT,
    "text" TEXT,
    "sent_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lead_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "side_effects" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "job_key" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "external_ref" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "side_effects_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payload_conflicts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "receipt_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "stored_digest" TEXT NOT NULL,
    "incoming_digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payload_conflicts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_entries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID,
    "api_key_id" UUID,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "replay_batches" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID,
    "api_key_id" UUID,
    "filter" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "matched" INTEGER NOT NULL DEFAULT 0,
    "queued" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "succeeded" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "replay_batches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "tenants_created_at_id_idx" ON "tenants"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");

-- CreateIndex
CREATE INDEX "connections_tenant_id_created_at_id_idx" ON "connections"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "connections_provider_external_account_id_key" ON "connections"("provider", "external_account_id");

-- CreateIndex
CREATE INDEX "receipts_tenant_id_received_at_id_idx" ON "receipts"("tenant_id", "received_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "receipts_tenant_id_lead_id_idx" ON "receipts"("tenant_id", "lead_id");

-- CreateIndex
CREATE INDEX "receipts_received_at_idx" ON "receipts"("received_at");

-- CreateIndex
CREATE UNIQUE INDEX "receipts_provider_account_id_idempotency_key_key" ON "receipts"("provider", "account_id", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_job_key_key" ON "jobs"("job_key");

-- CreateIndex
CREATE INDEX "jobs_status_next_attempt_at_idx" ON "jobs"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "jobs_tenant_id_created_at_id_idx" ON "jobs"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "jobs_receipt_id_idx" ON "jobs"("receipt_id");

-- CreateIndex
CREATE INDEX "jobs_connection_id_status_idx" ON "jobs"("connection_id", "status");

-- CreateIndex
CREATE INDEX "job_attempts_job_id_number_idx" ON "job_attempts"("job_id", "number");

-- CreateIndex
CREATE INDEX "leads_tenant_id_created_at_id_idx" ON "leads"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "leads_tenant_id_provider_external_lead_id_key" ON "leads"("tenant_id", "provider", "external_lead_id");

-- CreateIndex
CREATE UNIQUE INDEX "lead_messages_lead_id_external_id_key" ON "lead_messages"("lead_id", "external_id");

-- CreateIndex
CREATE UNIQUE INDEX "side_effects_job_key_key" ON "side_effects"("job_key");

-- CreateIndex
CREATE INDEX "payload_conflicts_tenant_id_created_at_id_idx" ON "payload_conflicts"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_entries_tenant_id_created_at_id_idx" ON "audit_entries"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "replay_batches_tenant_id_created_at_idx" ON "replay_batches"("tenant_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "connections" ADD CONSTRAINT "connections_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_receipt_id_fkey" FOREIGN KEY ("receipt_id") REFERENCES "receipts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "job_attempts" ADD CONSTRAINT "job_attempts_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "jobs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lead_messages" ADD CONSTRAINT "lead_messages_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payload_conflicts" ADD CONSTRAINT "payload_conflicts_receipt_id_fkey" FOREIGN KEY ("receipt_id") REFERENCES "receipts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- Closed vocabularies (hand-written: Prisma does not model CHECK constraints, and the TypeScript unions
-- in src/ name the same values).
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_role_check" CHECK ("role" IN ('operator', 'tenant-admin'));
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_check" CHECK (("role" = 'operator') = ("tenant_id" IS NULL));
ALTER TABLE "connections" ADD CONSTRAINT "connections_provider_check" CHECK ("provider" IN ('staticforms', 'thumbtack', 'yelp'));
ALTER TABLE "connections" ADD CONSTRAINT "connections_status_check" CHECK ("status" IN ('active', 'paused', 'credential_error', 'disabled'));
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_provider_check" CHECK ("provider" IN ('staticforms', 'thumbtack', 'yelp'));
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_status_check" CHECK ("status" IN ('accepted', 'ignored'));
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_kind_check" CHECK ("kind" IN ('lead.created', 'lead.updated', 'lead.replied', 'ignored'));
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_operation_check" CHECK ("operation" IN ('lead-upsert', 'initial-response', 'crm-delivery'));
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_status_check" CHECK ("status" IN ('queued', 'running', 'retrying', 'succeeded', 'dead', 'blocked', 'held', 'cancelled'));
ALTER TABLE "leads" ADD CONSTRAINT "leads_provider_check" CHECK ("provider" IN ('staticforms', 'thumbtack', 'yelp'));
ALTER TABLE "lead_messages" ADD CONSTRAINT "lead_messages_direction_check" CHECK ("direction" IN ('inbound', 'outbound'));
ALTER TABLE "replay_batches" ADD CONSTRAINT "replay_batches_status_check" CHECK ("status" IN ('pending', 'running', 'done', 'failed'));
