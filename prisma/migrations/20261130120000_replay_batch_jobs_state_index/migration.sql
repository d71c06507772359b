-- CreateIndex
CREATE INDEX "replay_batch_jobs_batch_id_state_idx" ON "replay_batch_jobs"("batch_id", "state");

