-- Time-ordered ids (UUID version 7, RFC 9562: 48 bits of Unix milliseconds, then random bits) for
-- the rows written for every event: receipts, jobs, job attempts and leads. A random (version 4) id
-- puts each new row's primary-key entry, and every index entry that names it (a job's receipt_id, a
-- payload's receipt_id, an attempt's job_id), on a random page of an index that grows with the
-- history, so after each checkpoint nearly every insert writes a whole page image to the WAL: with
-- 1,000,000 receipts stored, 0.3–1.2 full-page images and 3.5–8.3 kB of WAL per ingest request,
-- against 0.16–0.33 and 2.6–3.4 kB with time-ordered ids (docs/benchmarks.md). New ids land on the
-- right edge of those indexes. Existing ids stay as they are, and ids are still plain uuids, compared
-- and validated as before (nothing reads a version from them). Written in SQL (Postgres 15 has no
-- uuidv7()): a random uuid with its first 48 bits replaced by the time and its version set to 7.
CREATE OR REPLACE FUNCTION leadgate_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

ALTER TABLE "receipts" ALTER COLUMN "id" SET DEFAULT leadgate_uuid_v7();
ALTER TABLE "jobs" ALTER COLUMN "id" SET DEFAULT leadgate_uuid_v7();
ALTER TABLE "job_attempts" ALTER COLUMN "id" SET DEFAULT leadgate_uuid_v7();
ALTER TABLE "leads" ALTER COLUMN "id" SET DEFAULT leadgate_uuid_v7();
