-- POST /admin/connections/{id}/sync while a run is running makes one follow-up run, which starts
-- once the running one ended (api.md /sync row): the run it follows, and its jobs made only then.

-- AlterTable
ALTER TABLE "sync_runs" ADD COLUMN     "follows_run_id" UUID;

-- The follow-ups not started yet, oldest first (the worker's sweep, SyncRunFollowUps, every second):
-- few rows, whatever the history. Not CONCURRENTLY: sync_runs is small (a row per call that made
-- a run) and no row matches yet.
CREATE INDEX "sync_runs_waiting_idx" ON "sync_runs" ("created_at")
  WHERE "follows_run_id" IS NOT NULL AND "reconciliation_job_id" IS NULL;
