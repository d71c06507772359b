// PREAUTH_FAILURE_LIMIT (api.md): failed authentications per client IP per minute. Beyond it the IP's
// failing requests get 429 (made-up connection ids without a database query); a request that
// authenticates is never refused. Unknown connection ids are cached briefly (no query per repeat).
// Each test speaks from its own client address (X-Forwarded-For, believed from TRUST_PROXY).
import { randomBytes, randomUUID } from "node:crypto";
import type { PoolClient } from "pg";
import { OPERATOR_KEY } from "../support/admin.js";
import { storedFor } from "../support/database.js";
import { fixture } from "../support/fixtures.js";
import { useApp } from "../support/harness.js";
import { type Answer, get, post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";

const LIMIT = 5;
const YELP_TOKEN = "yelp-platform-token-0123456789";
const YELP_BUSINESS = "preauthBiz_0123456789";

/** The promise's value, or "no answer" if it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "no answer"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"no answer">((resolve) => (timer = setTimeout(() => resolve("no answer"), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("failed-authentication budget per client IP", () => {
  const app = useApp({
    env: {
      PREAUTH_FAILURE_LIMIT: String(LIMIT),
      TRUST_PROXY: "127.0.0.1",
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    },
  });
  let c: TestConnection;

  beforeAll(async () => {
    c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    await app.createConnection({
      provider: "yelp",
      externalAccountId: YELP_BUSINESS,
      inboundAuth: { type: "none" },
    });
  });

  const deliver = (ip: string, connectionId: string, secret: string) =>
    post(
      `${app.url}/webhooks/staticforms/${connectionId}`,
      {
        event: "form.submitted",
        data: { submissionId: randomBytes(6).toString("hex"), formData: { name: "P" } },
      },
      { authorization: `Bearer ${secret}`, "x-forwarded-for": ip },
    );
  const expectRefused = (answer: Answer | "no answer") => {
    expect(answer).not.toBe("no answer");
    const { status, body, headers } = answer as Answer;
    expect([status, body.error]).toEqual([429, "rate_limited"]);
    expect(Number(headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(headers.get("retry-after"))).toBeLessThanOrEqual(60);
  };
  /** Holds the connections table: any query of it waits until `release`. */
  const lockConnections = async (): Promise<PoolClient> => {
    const lock = await app.sql.connect();
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE connections IN ACCESS EXCLUSIVE MODE");
    return lock;
  };
  const release = async (lock: PoolClient) => {
    await lock.query("ROLLBACK");
    lock.release();
  };

  it("wrong secrets and unknown ids answer 401/404 up to the limit, then 429; an authenticating delivery still passes", async () => {
    const ip = "203.0.113.1";
    const before = await storedFor(app.sql, c.tenantId);
    const failures: Answer[] = [];
    for (let i = 0; i < LIMIT; i++) {
      failures.push(await (i % 2 ? deliver(ip, randomUUID(), "x") : deliver(ip, c.connectionId, "wrong")));
    }
    expect(failures.map((answer) => answer.status)).toEqual([401, 404, 401, 404, 401]);
    expectRefused(await deliver(ip, c.connectionId, "wrong"));
    expectRefused(await deliver(ip, randomUUID(), "x"));
    expect(await storedFor(app.sql, c.tenantId)).toEqual(before);

    // The right secret from the same address is never refused by the budget.
    expect((await deliver(ip, c.connectionId, c.secrets.bearerToken!)).status).toBe(202);
    // Another address has its own budget.
    expect((await deliver("203.0.113.2", c.connectionId, "wrong")).status).toBe(401);
  });

  it("over the budget, made-up connection ids are refused without a database query", async () => {
    const ip = "203.0.113.3";
    for (let i = 0; i <= LIMIT; i++) await deliver(ip, c.connectionId, "wrong");
    expectRefused(await deliver(ip, randomUUID(), "x")); // brings the set of connection ids up to date
    const lock = await lockConnections();
    try {
      const answers = await within(
        Promise.all(Array.from({ length: 20 }, () => deliver(ip, randomUUID(), "x"))),
        10_000, // a query would wait behind the lock, to a 503 at the 10 s statement timeout at best
      );
      expect(answers).not.toBe("no answer");
      for (const answer of answers as Answer[]) expectRefused(answer);
    } finally {
      await release(lock);
    }
    // A known connection is still looked up: the right secret passes, a wrong one is refused.
    expect((await deliver(ip, c.connectionId, c.secrets.bearerToken!)).status).toBe(202);
    expectRefused(await deliver(ip, c.connectionId, "wrong"));
  });

  it("an unknown connection id is looked up once: repeats within 30 s answer 404 without a query", async () => {
    const ip = "203.0.113.4";
    const unknown = randomUUID();
    expect((await deliver(ip, unknown, "x")).status).toBe(404);
    const lock = await lockConnections();
    let pending: Promise<Answer> | undefined;
    try {
      pending = deliver(ip, unknown, "x");
      const again = await within(pending, 10_000);
      expect(again).not.toBe("no answer");
      expect([(again as Answer).status, (again as Answer).body.error]).toEqual([404, "unknown_connection"]);
    } finally {
      await release(lock);
      await pending;
    }
  });

  it("Yelp: a wrong URL token counts; the right token is never refused, and an unknown business does not count", async () => {
    const ip = "203.0.113.5";
    const delivery = fixture("yelp/new-event.json").json as { data: Record<string, unknown> };
    const body = (business: string) => ({ ...delivery, data: { ...delivery.data, id: business } });
    const send = (token: string, business = YELP_BUSINESS) =>
      post(`${app.url}/webhooks/yelp/${token}`, body(business), { "x-forwarded-for": ip });
    // Unknown businesses with the right token: authenticated, so they use none of the budget.
    for (let i = 0; i <= LIMIT; i++) expect((await send(YELP_TOKEN, `unknown_${i}`)).status).toBe(404);
    for (let i = 0; i < LIMIT; i++) expect((await send(`${YELP_TOKEN}-wrong`)).status).toBe(401);
    expectRefused(await send(`${YELP_TOKEN}-wrong`));
    expectRefused(
      await get(`${app.url}/webhooks/yelp/wrong-token?verification=abc`, { "x-forwarded-for": ip }),
    );
    expect((await send(YELP_TOKEN)).status).toBe(202);
    expect((await send(YELP_TOKEN, "unknown_after")).status).toBe(404);
    const handshake = await get(`${app.url}/webhooks/yelp/${YELP_TOKEN}?verification=abc`, {
      "x-forwarded-for": ip,
    });
    expect([handshake.status, handshake.body.verification]).toEqual([200, "abc"]);
  });

  it("admin API: unknown keys count, then 429 (also at the queue dashboard); the operator key still works", async () => {
    const ip = "203.0.113.6";
    const admin = (key: string | undefined, path = "/admin/tenants") =>
      fetch(`${app.url}${path}`, {
        headers: { "x-forwarded-for": ip, ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
      });
    for (let i = 0; i < LIMIT; i++) {
      expect((await admin(i % 2 ? undefined : `lg_${randomBytes(16).toString("hex")}`)).status).toBe(401);
    }
    const refused = await admin(`lg_${randomBytes(16).toString("hex")}`);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: string }).error).toBe("rate_limited");
    expect((await admin(undefined, "/admin/queues")).status).toBe(429);
    expect((await admin(OPERATOR_KEY)).status).toBe(200);
  });
});
