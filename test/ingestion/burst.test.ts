// A realistic burst is never refused by the default rate limit: Static Forms retries a refused
// delivery only 3 times, so a 429 there can lose a form submission for good.
import { randomBytes } from "node:crypto";
import { storedFor } from "../support/database.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";

describe("a burst to one connection under the default settings", () => {
  const app = useApp(); // WEBHOOK_RATE_LIMIT and its window at their defaults

  it("1,000 Static Forms deliveries at once from 50 senders: every one stored, no 429", async () => {
    const c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    const url = `${app.url}/webhooks/staticforms/${c.connectionId}`;
    const auth = { authorization: `Bearer ${c.secrets.bearerToken}` };
    const statuses: number[] = [];
    const started = Date.now();
    let next = 0;
    // 50 senders at once (a form posted to a mailing list), 1,000 distinct submissions.
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < 1000) {
          next += 1;
          const body = {
            event: "form.submitted",
            data: { submissionId: randomBytes(8).toString("hex"), formData: { name: "Burst" } },
          };
          statuses.push((await post(url, body, auth)).status);
        }
      }),
    );
    // Within one rate-limit window (60 s by default), so the whole burst met the limit. Not a speed
    // check: a burst takes 3–13 s here, depending on what else the machine runs.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(statuses.filter((status) => status !== 202)).toEqual([]);
    expect(statuses).toHaveLength(1000);
    expect((await storedFor(app.sql, c.tenantId)).receipts).toBe(1000);
  });
});
