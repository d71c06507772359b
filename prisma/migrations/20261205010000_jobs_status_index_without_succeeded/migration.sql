-- The status index holds the jobs that are not `succeeded`: the work the dispatcher and the sweeps
-- look for (queued, retrying, waiting, running, held, blocked) and the finished jobs an operator
-- replays (dead, cancelled). Succeeded jobs, nearly all of them, are never looked up by status: a
-- success no longer writes an entry, and the index stays the size of the open work. A claim or a
-- success names its statuses as a parameter, which cannot prove the index's predicate: they read
-- their jobs by id (primary key) or receipt, never through this index.
CREATE INDEX "jobs_status_next_attempt_at_not_succeeded_idx" ON "jobs"("status", "next_attempt_at")
  WHERE "status" <> 'succeeded';
DROP INDEX "jobs_status_next_attempt_at_idx";
