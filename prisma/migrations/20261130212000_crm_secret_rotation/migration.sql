-- AlterTable
ALTER TABLE "connections" ADD COLUMN     "previous_crm_signing_secret" TEXT,
ADD COLUMN     "previous_crm_signing_secret_expire_at" TIMESTAMPTZ(3);

