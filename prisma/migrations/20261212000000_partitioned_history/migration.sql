-- Partitioned history (docs/operations.md "Partitioned history"). HAND-WRITTEN, outside the
-- schema-diff workflow: Prisma does not model partitions. The tables that only grow are partitioned
-- by month (native declarative partitioning, ranges in UTC), each with a DEFAULT partition, so
-- retention detaches and drops whole months instead of deleting row by row:
--   receipt_payloads  (new: the payloads move out of receipts)  by received_at
--   job_attempts      by job_created_at (the job's created_at, copied)
--   lead_messages     by lead_created_at (the lead's created_at, copied)
--   audit_entries     by created_at
-- A unique key of a partitioned table must hold its partition key: each one here adds a column
-- that is a function of the key's other columns (a receipt's received_at, a job's or a lead's
-- created_at never change), so it is exactly as unique as before, across all partitions.
-- Existing rows are converted by copy-and-swap (create the partitioned table, copy, drop the old):
-- run it with the service stopped (docs/operations.md says how long it takes).

-- How the functions are written: Prisma applies a migration split at every semicolon, so each
-- PL/pgSQL body is an E string with \x3b for its semicolons (as in migration 20261202020000_alerts).

-- Creates the month partition of `parent` that holds `month` (idempotent, answers whether it created
-- it). Rows of that month already in the DEFAULT partition move into it, so creating a month that
-- DEFAULT caught rows of never fails. Used by this migration and by the retention worker's
-- maintenance (src/retention/partitions.repository.ts).
CREATE OR REPLACE FUNCTION leadgate_create_month_partition(parent text, month timestamptz) RETURNS boolean
LANGUAGE plpgsql AS E'
DECLARE
  start_at timestamptz := date_trunc(''month'', month AT TIME ZONE ''UTC'') AT TIME ZONE ''UTC''\x3b
  end_at timestamptz := (date_trunc(''month'', month AT TIME ZONE ''UTC'') + interval ''1 month'') AT TIME ZONE ''UTC''\x3b
  name text := format(''%s_p%s'', parent, to_char(month AT TIME ZONE ''UTC'', ''YYYYMM''))\x3b
  key text\x3b
BEGIN
  -- Two workers'' maintenance at once: one creates, the other then finds it.
  PERFORM pg_advisory_xact_lock(hashtext(''leadgate_create_month_partition''))\x3b
  IF to_regclass(name) IS NOT NULL THEN
    RETURN false\x3b
  END IF\x3b
  SELECT a.attname INTO STRICT key
  FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
  WHERE p.partrelid = parent::regclass\x3b
  EXECUTE format(''CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)'', name, parent)\x3b
  EXECUTE format(''WITH moved AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved'',
                 parent || ''_default'', key, key, name) USING start_at, end_at\x3b
  -- The range as a CHECK first: ATTACH then needs no scan of the new table.
  EXECUTE format(''ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I >= %L AND %I < %L)'',
                 name, name || ''_range'', key, start_at, key, end_at)\x3b
  EXECUTE format(''ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)'', parent, name, start_at, end_at)\x3b
  EXECUTE format(''ALTER TABLE %I DROP CONSTRAINT %I'', name, name || ''_range'')\x3b
  RETURN true\x3b
END ';

-- The month partitions from the oldest row's month to two months after the current one (the copy then finds its
-- months: old rows are dropped by month too, not left in DEFAULT).
CREATE OR REPLACE FUNCTION leadgate_create_month_partitions(parent text, oldest timestamptz) RETURNS void
LANGUAGE plpgsql AS E'
DECLARE
  month timestamptz := date_trunc(''month'', COALESCE(LEAST(oldest, now()), now()) AT TIME ZONE ''UTC'') AT TIME ZONE ''UTC''\x3b
BEGIN
  WHILE month < (date_trunc(''month'', now() AT TIME ZONE ''UTC'') + interval ''3 months'') AT TIME ZONE ''UTC'' LOOP
    PERFORM leadgate_create_month_partition(parent, month)\x3b
    month := month + interval ''1 month''\x3b
  END LOOP\x3b
END ';

-- The conversion is ONE statement (a DO block): `prisma migrate deploy` runs each piece of the file
-- between semicolons on its own, outside any transaction, so only a single statement is atomic. A
-- failure anywhere in it (disk full during a copy) changes nothing: fix the cause, mark the failed
-- attempt rolled back (docs/operations.md "Partitioned history" says how) and deploy again (the
-- functions above are CREATE OR REPLACE).
DO E'
BEGIN
  -- Every dropped month of a table''s partitions: when its rows were dropped. A receipt whose payload
  -- went with its month reports that time as payloadPurgedAt (its own row is not rewritten).
  CREATE TABLE "partition_drops" (
      "parent" TEXT NOT NULL,
      "range_start" TIMESTAMPTZ(3) NOT NULL,
      "range_end" TIMESTAMPTZ(3) NOT NULL,
      "dropped_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
      "survivors" INTEGER NOT NULL,
      CONSTRAINT "partition_drops_pkey" PRIMARY KEY ("parent", "range_start")
  )\x3b

  -- receipt_payloads: the payloads leave receipts (which stays unpartitioned: its unique identity
  -- decides races for RECEIPT_RETENTION_DAYS).
  CREATE TABLE "receipt_payloads" (
      "receipt_id" UUID NOT NULL,
      "tenant_id" UUID NOT NULL,
      "received_at" TIMESTAMPTZ(3) NOT NULL,
      "payload" JSONB NOT NULL,
      CONSTRAINT "receipt_payloads_pkey" PRIMARY KEY ("receipt_id", "received_at")
  ) PARTITION BY RANGE ("received_at")\x3b
  CREATE TABLE "receipt_payloads_default" PARTITION OF "receipt_payloads" DEFAULT\x3b
  -- Retention''s purge of DEFAULT (retention.repository.ts purgeDefault): its rows older than a cutoff.
  CREATE INDEX "receipt_payloads_default_received_at_idx" ON "receipt_payloads_default"("received_at")\x3b
  PERFORM leadgate_create_month_partitions(''receipt_payloads'',
    (SELECT min("received_at") FROM "receipts" WHERE "raw_payload" IS NOT NULL))\x3b
  INSERT INTO "receipt_payloads" ("receipt_id", "tenant_id", "received_at", "payload")
  SELECT "id", "tenant_id", "received_at", "raw_payload" FROM "receipts" WHERE "raw_payload" IS NOT NULL\x3b
  DROP INDEX "receipts_unpurged_received_at_idx"\x3b
  ALTER TABLE "receipts" DROP COLUMN "raw_payload"\x3b

  -- job_attempts: no foreign key to jobs any more (a partitioned table may reference a plain one, but
  -- then every job deletion would delete its attempts row by row): a job''s attempts go with their
  -- month''s partition, and the drop keeps those whose job still exists.
  ALTER TABLE "job_attempts" RENAME TO "job_attempts_unpartitioned"\x3b
  ALTER INDEX "job_attempts_pkey" RENAME TO "job_attempts_unpartitioned_pkey"\x3b
  ALTER INDEX "job_attempts_job_id_number_key" RENAME TO "job_attempts_unpartitioned_job_id_number_key"\x3b
  CREATE TABLE "job_attempts" (
      "id" UUID NOT NULL DEFAULT gen_random_uuid(),
      "tenant_id" UUID NOT NULL,
      "job_id" UUID NOT NULL,
      "number" INTEGER NOT NULL,
      "started_at" TIMESTAMPTZ(3) NOT NULL,
      "finished_at" TIMESTAMPTZ(3),
      "outcome" TEXT,
      "error_code" TEXT,
      "duration_ms" INTEGER,
      "job_created_at" TIMESTAMPTZ(3) NOT NULL,
      CONSTRAINT "job_attempts_pkey" PRIMARY KEY ("id", "job_created_at")
  ) PARTITION BY RANGE ("job_created_at")\x3b
  -- One row per attempt number (job_created_at is fixed per job: as unique as (job_id, number)).
  CREATE UNIQUE INDEX "job_attempts_job_id_number_key" ON "job_attempts"("job_id", "number", "job_created_at")\x3b
  CREATE TABLE "job_attempts_default" PARTITION OF "job_attempts" DEFAULT\x3b
  -- Retention''s purge of DEFAULT (retention.repository.ts purgeDefault): its rows older than a cutoff.
  CREATE INDEX "job_attempts_default_job_created_at_idx" ON "job_attempts_default"("job_created_at")\x3b
  PERFORM leadgate_create_month_partitions(''job_attempts'',
    (SELECT min(j."created_at") FROM "job_attempts_unpartitioned" a JOIN "jobs" j ON j."id" = a."job_id"))\x3b
  INSERT INTO "job_attempts" ("id", "tenant_id", "job_id", "number", "started_at", "finished_at", "outcome",
                              "error_code", "duration_ms", "job_created_at")
  SELECT a."id", a."tenant_id", a."job_id", a."number", a."started_at", a."finished_at", a."outcome",
         a."error_code", a."duration_ms", j."created_at"
  FROM "job_attempts_unpartitioned" a JOIN "jobs" j ON j."id" = a."job_id"\x3b
  DROP TABLE "job_attempts_unpartitioned"\x3b

  -- lead_messages: by the lead''s created_at, the foreign key to leads stays (leads are not deleted).
  ALTER TABLE "lead_messages" RENAME TO "lead_messages_unpartitioned"\x3b
  ALTER INDEX "lead_messages_pkey" RENAME TO "lead_messages_unpartitioned_pkey"\x3b
  ALTER INDEX "lead_messages_lead_id_external_id_key" RENAME TO "lead_messages_unpartitioned_lead_id_external_id_key"\x3b
  CREATE TABLE "lead_messages" (
      "id" UUID NOT NULL DEFAULT gen_random_uuid(),
      "tenant_id" UUID NOT NULL,
      "lead_id" UUID NOT NULL,
      "external_id" TEXT NOT NULL,
      "direction" TEXT NOT NULL,
      "author" TEXT,
      "text" TEXT,
      "sent_at" TIMESTAMPTZ(3) NOT NULL,
      "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
      "position" INTEGER,
      "cursor" TEXT,
      "lead_created_at" TIMESTAMPTZ(3) NOT NULL,
      CONSTRAINT "lead_messages_pkey" PRIMARY KEY ("id", "lead_created_at"),
      CONSTRAINT "lead_messages_direction_check" CHECK ("direction" IN (''inbound'', ''outbound'')),
      CONSTRAINT "lead_messages_lead_id_fkey" FOREIGN KEY ("lead_id") REFERENCES "leads"("id") ON DELETE RESTRICT ON UPDATE CASCADE
  ) PARTITION BY RANGE ("lead_created_at")\x3b
  -- The message upsert key (lead_created_at is fixed per lead: as unique as (lead_id, external_id)).
  CREATE UNIQUE INDEX "lead_messages_lead_id_external_id_key" ON "lead_messages"("lead_id", "external_id", "lead_created_at")\x3b
  CREATE TABLE "lead_messages_default" PARTITION OF "lead_messages" DEFAULT\x3b
  -- Retention''s purge of DEFAULT (retention.repository.ts purgeDefault): its rows older than a cutoff.
  CREATE INDEX "lead_messages_default_lead_created_at_idx" ON "lead_messages_default"("lead_created_at")\x3b
  PERFORM leadgate_create_month_partitions(''lead_messages'',
    (SELECT min(l."created_at") FROM "lead_messages_unpartitioned" m JOIN "leads" l ON l."id" = m."lead_id"))\x3b
  INSERT INTO "lead_messages" ("id", "tenant_id", "lead_id", "external_id", "direction", "author", "text", "sent_at",
                               "created_at", "position", "cursor", "lead_created_at")
  SELECT m."id", m."tenant_id", m."lead_id", m."external_id", m."direction", m."author", m."text", m."sent_at",
         m."created_at", m."position", m."cursor", l."created_at"
  FROM "lead_messages_unpartitioned" m JOIN "leads" l ON l."id" = m."lead_id"\x3b
  DROP TABLE "lead_messages_unpartitioned"\x3b

  -- audit_entries: by created_at, the primary key holds it (id alone is a random uuid).
  ALTER TABLE "audit_entries" RENAME TO "audit_entries_unpartitioned"\x3b
  ALTER INDEX "audit_entries_pkey" RENAME TO "audit_entries_unpartitioned_pkey"\x3b
  ALTER INDEX "audit_entries_tenant_id_created_at_id_idx" RENAME TO "audit_entries_unpartitioned_tenant_id_created_at_id_idx"\x3b
  CREATE TABLE "audit_entries" (
      "id" UUID NOT NULL DEFAULT gen_random_uuid(),
      "tenant_id" UUID,
      "api_key_id" UUID,
      "action" TEXT NOT NULL,
      "target_type" TEXT NOT NULL,
      "target_id" TEXT,
      "details" JSONB NOT NULL DEFAULT ''{}'',
      "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
      "user_id" UUID,
      CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id", "created_at")
  ) PARTITION BY RANGE ("created_at")\x3b
  CREATE INDEX "audit_entries_tenant_id_created_at_id_idx" ON "audit_entries"("tenant_id", "created_at" DESC, "id" DESC)\x3b
  CREATE TABLE "audit_entries_default" PARTITION OF "audit_entries" DEFAULT\x3b
  -- Retention''s purge of DEFAULT (retention.repository.ts purgeDefault): its rows older than a cutoff.
  CREATE INDEX "audit_entries_default_created_at_idx" ON "audit_entries_default"("created_at")\x3b
  PERFORM leadgate_create_month_partitions(''audit_entries'', (SELECT min("created_at") FROM "audit_entries_unpartitioned"))\x3b
  INSERT INTO "audit_entries" SELECT * FROM "audit_entries_unpartitioned"\x3b
  DROP TABLE "audit_entries_unpartitioned"\x3b

  -- Retention of the finished jobs without a receipt (a connection''s, an alert''s), oldest completed
  -- first (retention.repository.ts purgeUnownedJobs).
  CREATE INDEX "jobs_unowned_finished_completed_at_idx" ON "jobs"("completed_at")
    WHERE "receipt_id" IS NULL AND "status" IN (''succeeded'', ''dead'', ''cancelled'')\x3b
END ';
