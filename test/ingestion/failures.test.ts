// Invariants 2 and 3: receipt and jobs commit together or not at all, and no 2xx without a
// commit. Redis is only the executor: an outage does not fail ingest.
import { JOB_OUTBOX_CHANNEL, outboxIds } from "../../src/jobs/job-outbox.js";
import { storedFor } from "../support/database.js";
import type { RunningApi } from "../support/app.js";
import { useApp } from "../support/harness.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv } from "../support/redis.js";
import type { TestConnection } from "../support/tenants.js";
import { get, post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const submission = (id: string) => ({
  event: "form.submitted",
  data: { submissionId: id, formData: { name: "F" } },
});

describe("ingest under failure", () => {
  const app = useApp();
  let connection: TestConnection;

  const send = (target: RunningApi, id: string) =>
    post(`${target.url}/webhooks/staticforms/${connection.connectionId}`, submission(id), {
      authorization: `Bearer ${connection.secrets.bearerToken}`,
    });

  beforeAll(async () => {
    connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: "http://127.0.0.1:9/crm" } },
    });
  });

  it("tells the workers of the committed jobs that may run at the commit (the job outbox's NOTIFY), and of nothing for a duplicate", async () => {
    const listener = await app.sql.connect();
    const heard: string[] = [];
    listener.on("notification", (message) => {
      if (message.channel === JOB_OUTBOX_CHANNEL) heard.push(...outboxIds(message.payload));
    });
    try {
      await listener.query(`LISTEN ${JOB_OUTBOX_CHANNEL}`);
      const answer = await send(app.api, "enqueued-1");
      expect(answer.status).toBe(202);
      const { rows } = await app.sql.query<{ id: string; operation: string }>(
        "SELECT id, operation FROM jobs WHERE receipt_id = $1 AND status = 'queued'",
        [answer.body.receiptIds[0]],
      );
      // The CRM delivery waits for the lead-upsert, whose success hands it over.
      expect(rows.map((row) => row.operation)).toEqual(["lead-upsert"]);
      await waitFor(
        () => Promise.resolve(heard.length),
        (n) => n > 0,
      );
      expect(heard).toEqual(rows.map((row) => row.id));

      const again = await send(app.api, "enqueued-1");
      expect(again.status).toBe(200);
      // A later notification would come after this round trip's: one more delivery shows the channel is quiet.
      const other = await send(app.api, "enqueued-2");
      await waitFor(
        () => Promise.resolve(heard.length),
        (n) => n > 1,
      );
      const { rows: others } = await app.sql.query<{ id: string }>(
        "SELECT id FROM jobs WHERE receipt_id = $1 AND status = 'queued'",
        [other.body.receiptIds[0]],
      );
      expect(heard).toEqual([...rows, ...others].map((row) => row.id));
    } finally {
      await listener.query(`UNLISTEN ${JOB_OUTBOX_CHANNEL}`);
      listener.release();
    }
  });

  it("a failure inside the write (job insert) answers 503 and leaves no receipt; the retry is stored whole", async () => {
    await app.sql.query(`
      CREATE FUNCTION fail_job_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected failure on job insert'; END $$;
      CREATE TRIGGER fail_job_insert BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION fail_job_insert();`);
    const before = await storedFor(app.sql, connection.tenantId);
    let failed;
    try {
      failed = await send(app.api, "injected-1");
    } finally {
      await app.sql.query("DROP TRIGGER fail_job_insert ON jobs; DROP FUNCTION fail_job_insert();");
    }
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBeTruthy();
    expect(failed.body.error).toBe("unavailable");
    expect(await storedFor(app.sql, connection.tenantId)).toEqual(before);

    const retry = await send(app.api, "injected-1");
    expect(retry.status).toBe(202);
    const after = await storedFor(app.sql, connection.tenantId);
    expect(after.receipts - before.receipts).toBe(1);
    expect(after.jobs - before.jobs).toBe(2);
  });

  it("a delivery whose data the database refuses fails alone, not its whole batch", async () => {
    await app.sql.query(`
      CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.lead_id = 'poison' THEN RAISE EXCEPTION 'refused' USING ERRCODE = '22023'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_poison BEFORE INSERT ON receipts FOR EACH ROW EXECUTE FUNCTION refuse_poison();`);
    let answers;
    try {
      answers = await Promise.all([
        ...Array.from({ length: 10 }, (_, i) => send(app.api, `healthy-${i}`)),
        send(app.api, "poison"),
        ...Array.from({ length: 10 }, (_, i) => send(app.api, `healthy-${i + 10}`)),
      ]);
    } finally {
      await app.sql.query("DROP TRIGGER refuse_poison ON receipts; DROP FUNCTION refuse_poison();");
    }
    expect(answers[10]?.status).toBe(503);
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(20);
    const { rows } = await app.sql.query(
      "SELECT count(*)::int AS n FROM receipts WHERE lead_id LIKE 'healthy-%'",
    );
    expect(rows).toEqual([{ n: 20 }]);
  });

  it("the database unreachable: 503 with Retry-After, never a 2xx", async () => {
    const deadDatabase = `postgresql://postgres@127.0.0.1:${await freePort()}/nowhere`;
    const orphan = await app.startApi({ DATABASE_URL: deadDatabase });
    try {
      const answers = await Promise.all([
        send(orphan, "no-db-1"),
        send(orphan, "no-db-2"),
        send(orphan, "no-db-1"),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(answer.body.error).toBe("unavailable");
      }
    } finally {
      await orphan.close();
    }
  });

  it("Redis unreachable during ingest: 202, the job rows are there and queued, the unchecked rate limit is counted", async () => {
    const noRedis = await app.startApi(deadRedisEnv(await freePort()));
    try {
      const answer = await send(noRedis, "no-redis-1");
      expect(answer.status).toBe(202);
      const { rows } = await app.sql.query(
        "SELECT operation, status FROM jobs WHERE receipt_id = $1 ORDER BY operation",
        [answer.body.receiptIds[0]],
      );
      expect(rows).toEqual([
        { operation: "crm-delivery", status: "waiting" }, // until its lead-upsert succeeded
        { operation: "lead-upsert", status: "queued" },
      ]);
      const metrics = await (await fetch(`${noRedis.url}/metrics`)).text();
      // Ingest's only Redis call is the rate limit: let through, counted. The jobs wait for a dispatcher.
      expect(metrics).toMatch(/leadgate_rate_limit_unchecked_total 1\b/);
      expect(metrics).toMatch(/leadgate_enqueue_failures_total 0\b/);
      expect((await get(`${noRedis.url}/health/ready`)).status).toBe(503);
    } finally {
      await noRedis.close();
    }
  });
});
