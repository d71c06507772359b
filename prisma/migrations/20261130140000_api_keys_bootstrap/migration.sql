-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "bootstrap" BOOLEAN NOT NULL DEFAULT false;

-- Keys the bootstrap step created before this column existed (it named them "bootstrap")
UPDATE "api_keys" SET "bootstrap" = true WHERE "name" = 'bootstrap' AND "tenant_id" IS NULL AND "role" = 'operator';
