-- Backfill counts bounded in the request: a dry run's count that outlasts it goes on in the worker (issue 28, M6).

-- AlterTable: a backfill's `matched` is unknown (null) until its count is done, and a dry run's
-- count that outlasted its request goes on in the worker as a `counting` backfill.
ALTER TABLE "backfills" ALTER COLUMN "matched" DROP NOT NULL,
ALTER COLUMN "matched" DROP DEFAULT;
ALTER TABLE "backfills" DROP CONSTRAINT "backfills_status_check";
ALTER TABLE "backfills" ADD CONSTRAINT "backfills_status_check" CHECK ("status" IN ('running', 'counting', 'done', 'failed'));

-- At most one running backfill or count per connection: the second insert fails (409 backfill_in_progress).
DROP INDEX "backfills_one_running";
CREATE UNIQUE INDEX "backfills_one_running" ON "backfills"("connection_id") WHERE "status" IN ('running', 'counting');
