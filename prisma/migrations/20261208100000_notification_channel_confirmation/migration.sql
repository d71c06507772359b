-- Issue 28 M3: an email channel receives alerts only once its address confirmed the mailed link.

-- AlterTable: existing channels (email ones included) stay `active`, the default. The admin API
-- creates an email channel `pending_confirmation` with the sha256 of its confirmation token.
ALTER TABLE "notification_channels" ADD COLUMN     "confirmation_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "confirmation_hash" TEXT,
ADD COLUMN     "confirmed_at" TIMESTAMPTZ(3),
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'active';

-- The statuses a channel may have (not expressible in schema.prisma).
ALTER TABLE "notification_channels" ADD CONSTRAINT "notification_channels_status_check"
  CHECK ("status" IN ('active', 'pending_confirmation'));
