-- AlterTable
ALTER TABLE "receipts" ADD COLUMN     "lead_type" TEXT;


-- Closed vocabulary (hand-written): the CRM delivery types.
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_lead_type_check" CHECK ("lead_type" IS NULL OR "lead_type" IN ('lead.created', 'lead.updated', 'lead.replied'));
