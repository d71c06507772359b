// Invariant 1: the database wins the race. Concurrent copies of one delivery, sent to two API
// instances sharing Postgres and Redis, make one receipt and one set of jobs.
import { storedFor } from "../support/database.js";
import type { RunningApi } from "../support/app.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";

describe("concurrent deliveries", () => {
  const app = useApp();
  let apis: RunningApi[];

  beforeAll(async () => {
    apis = [app.api, await app.startApi()];
  });

  it("20 copies of one delivery across two API instances: one 202, nineteen 200, one receipt with 19 duplicates, one set of jobs", async () => {
    const connection = await app.createConnection({
      provider: "thumbtack",
      inboundAuth: { type: "basic" },
      settings: {
        autoResponse: { enabled: true, text: "Thanks!" },
        crmDestination: { url: "http://127.0.0.1:9/crm" },
      },
    });
    const headers = {
      authorization: `Basic ${Buffer.from(`${connection.secrets.username}:${connection.secrets.password}`).toString("base64")}`,
    };
    const body = JSON.stringify({
      event: { eventType: "NegotiationCreatedV4", webhookID: "1", triggeredAt: "2026-04-02T15:20:07Z" },
      data: { negotiationID: "race-1", createdAt: "2026-04-02T15:20:01Z", customer: { firstName: "Ann" } },
    });

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(`${apis[i % 2]!.url}/webhooks/thumbtack/${connection.connectionId}`, body, headers),
      ),
    );

    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(19).fill(200), 202]);
    const receiptIds = new Set(answers.flatMap((answer) => answer.body.receiptIds));
    expect(receiptIds.size).toBe(1);
    const { rows } = await app.sql.query("SELECT duplicate_count FROM receipts WHERE tenant_id = $1", [
      connection.tenantId,
    ]);
    expect(rows).toEqual([{ duplicate_count: 19 }]);
    expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 1, jobs: 3, conflicts: 0 });
  });

  it("many different deliveries at once are all stored, each exactly once", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    const headers = { authorization: `Bearer ${connection.secrets.bearerToken}` };
    const send = (i: number) =>
      post(
        `${apis[i % 2]!.url}/webhooks/staticforms/${connection.connectionId}`,
        {
          event: "form.submitted",
          data: { submissionId: `burst-${i % 100}`, formData: { name: `n${i % 100}` } },
        },
        headers,
      );
    // 100 submissions, each sent twice, all at once: batches of both instances interleave.
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => send(i)));
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(100);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(100);
    expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 100, jobs: 100, conflicts: 0 });
    const { rows } = await app.sql.query(
      "SELECT sum(duplicate_count)::int AS duplicates FROM receipts WHERE tenant_id = $1",
      [connection.tenantId],
    );
    expect(rows).toEqual([{ duplicates: 100 }]);
  });

  it("20 copies of one submission with different content at once: one receipt, 19 conflicts, one payload.conflict alert counting them", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    const headers = { authorization: `Bearer ${connection.secrets.bearerToken}` };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(
          `${apis[i % 2]!.url}/webhooks/staticforms/${connection.connectionId}`,
          { event: "form.submitted", data: { submissionId: "conflicted", formData: { name: `n${i}` } } },
          headers,
        ),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array<number>(19).fill(200), 202]);
    expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 1, jobs: 1, conflicts: 19 });
    const { rows } = await app.sql.query(
      "SELECT type, status, count, error_code FROM alerts WHERE connection_id = $1",
      [connection.connectionId],
    );
    expect(rows).toEqual([
      { type: "payload.conflict", status: "open", count: 19, error_code: "digest_mismatch" },
    ]);
  });
});
