-- Retention's payload purge: the oldest receipts whose payload is still stored (partial, so purged
-- receipts cost nothing). Prisma's schema language has no partial indexes: this one lives here only.
CREATE INDEX "receipts_unpurged_received_at_idx" ON "receipts"("received_at") WHERE "payload_purged_at" IS NULL;
