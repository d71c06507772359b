-- AlterTable
ALTER TABLE "replay_batches" DROP COLUMN "failed",
DROP COLUMN "queued",
DROP COLUMN "skipped",
DROP COLUMN "succeeded";

-- CreateTable
CREATE TABLE "replay_batch_jobs" (
    "batch_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',

    CONSTRAINT "replay_batch_jobs_pkey" PRIMARY KEY ("batch_id","job_id")
);

-- CreateIndex
CREATE INDEX "replay_batches_status_idx" ON "replay_batches"("status");

-- AddForeignKey
ALTER TABLE "replay_batch_jobs" ADD CONSTRAINT "replay_batch_jobs_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "replay_batches"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- Closed vocabulary of a batch item's state
ALTER TABLE "replay_batch_jobs" ADD CONSTRAINT "replay_batch_jobs_state_check" CHECK ("state" IN ('pending', 'queued', 'skipped'));
