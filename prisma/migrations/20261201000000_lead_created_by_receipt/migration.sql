-- AlterTable: the receipt whose CRM delivery is `lead.created` (set once by its lead-upsert).
ALTER TABLE "leads" ADD COLUMN     "created_by_receipt_id" UUID;
