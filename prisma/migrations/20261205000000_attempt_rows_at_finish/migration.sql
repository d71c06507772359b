-- An attempt's row is written once, when the attempt ends (outcome, error, duration), instead of
-- opened by the claim and updated by the finish: the claim records when the running attempt began
-- on the job row (attempt_started_at), and a takeover of an abandoned run writes that attempt's row
-- as abandoned. One attempt number per job: the unique index lets a finish close a row an earlier
-- version opened at its claim (ON CONFLICT), and replaces the index that listed a job's attempts.
ALTER TABLE "jobs" ADD COLUMN "attempt_started_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "job_attempts_job_id_number_key" ON "job_attempts"("job_id", "number");
DROP INDEX "job_attempts_job_id_number_idx";
