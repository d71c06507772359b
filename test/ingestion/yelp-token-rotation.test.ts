// Rotating the platform-wide Yelp URL token without downtime: while
// YELP_WEBHOOK_TOKEN_PREVIOUS is set, deliveries and the GET handshake to the previous token's URL
// are accepted as to the current one, a wrong token still counts against the failed-authentication
// budget, and self-serve webhooks registered at the previous URL are moved to the new one by the
// registration sweep. The outcomes asserted are HTTP answers, rows and what the fake Yelp holds.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { storedFor } from "../support/database.js";
import {
  connectWithOAuth,
  providerEnv,
  useFakeOAuth,
  useFakeThumbtack,
  useFakeYelp,
} from "../support/fake-providers.js";
import { useApp } from "../support/harness.js";
import { get, post } from "../support/http.js";
import { waitFor } from "../support/wait.js";
import { RegistrationSweep } from "../../src/connections/registration-sweep.js";

const OLD_TOKEN = "yelp-old-platform-token-0123456789";
const NEW_TOKEN = "yelp-new-platform-token-9876543210";
const PUBLIC_BASE_URL = "https://leadgate.agency.example";

let deliveries = 0;
const newEvent = (business: string) => ({
  time: "2026-03-14T16:05:42+00:00",
  object: "business",
  data: {
    id: business,
    updates: [{ event_type: "NEW_EVENT", event_id: `evRot${++deliveries}`, lead_id: `leadRot${deliveries}` }],
  },
});

describe("Yelp URL token rotation: deliveries and the handshake", () => {
  const LIMIT = 3;
  const BUSINESS = "rotationBiz_0000000001";
  const app = useApp({
    env: {
      YELP_WEBHOOK_TOKEN: NEW_TOKEN,
      YELP_WEBHOOK_TOKEN_PREVIOUS: OLD_TOKEN,
      PREAUTH_FAILURE_LIMIT: String(LIMIT),
      TRUST_PROXY: "127.0.0.1",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    },
  });
  let tenantId: string;

  beforeAll(async () => {
    ({ tenantId } = await app.createConnection({
      provider: "yelp",
      externalAccountId: BUSINESS,
      inboundAuth: { type: "none" },
    }));
  });

  it("the previous token's URL takes deliveries and answers the handshake exactly as the current one's", async () => {
    const from = { "x-forwarded-for": "203.0.113.20" };
    for (const token of [OLD_TOKEN, NEW_TOKEN]) {
      const delivered = await post(`${app.url}/webhooks/yelp/${token}`, newEvent(BUSINESS), from);
      expect([delivered.status, delivered.body.accepted]).toEqual([202, true]);
      const handshake = await get(`${app.url}/webhooks/yelp/${token}?verification=Qz7Lm2Pw9Xk4`, from);
      expect([handshake.status, handshake.body]).toEqual([200, { verification: "Qz7Lm2Pw9Xk4" }]);
    }
    expect((await storedFor(app.sql, tenantId)).receipts).toBe(2);
  });

  it("a wrong token is refused and counts against the pre-auth budget; the previous token still passes", async () => {
    const from = { "x-forwarded-for": "203.0.113.21" };
    const before = await storedFor(app.sql, tenantId);
    const wrong = `${OLD_TOKEN}x`;
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      statuses.push((await post(`${app.url}/webhooks/yelp/${wrong}`, newEvent(BUSINESS), from)).status);
    }
    expect(statuses).toEqual([401, 401, 401]);
    const over = await get(`${app.url}/webhooks/yelp/${wrong}?verification=abc`, from);
    expect([over.status, over.body.error]).toEqual([429, "rate_limited"]);
    expect(await storedFor(app.sql, tenantId)).toEqual(before);
    // Authenticating requests are never refused by the budget.
    expect((await post(`${app.url}/webhooks/yelp/${OLD_TOKEN}`, newEvent(BUSINESS), from)).status).toBe(202);
  });
});

describe("Yelp URL token rotation: self-serve webhooks move to the new URL", () => {
  const oauth = useFakeOAuth();
  const thumbtack = useFakeThumbtack(oauth.reaches);
  const yelp = useFakeYelp(oauth.reaches);
  // The API only: each phase of the test runs its own worker, with the configuration of that phase.
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: OLD_TOKEN,
      YELP_WEBHOOK_MODE: "self-serve",
      PUBLIC_BASE_URL,
      ...providerEnv(yelp.server, thumbtack.server),
      ...oauth.env(),
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  const syncJobs = (connectionId: string) =>
    app.sql
      .query<{ status: string }>(
        "SELECT status FROM jobs WHERE connection_id = $1 AND operation = 'provider-sync'",
        [connectionId],
      )
      .then((result) => result.rows);
  const synced = (connectionId: string, count: number) =>
    waitFor(
      () => syncJobs(connectionId),
      (jobs) => jobs.length === count && jobs.every((job) => job.status === "succeeded"),
    );
  const hooksOf = (business: string) =>
    [...yelp.hooks.values()].filter((hook) => hook.restricted_business_ids.includes(business));

  it("the sweep re-registers every connection whose webhook carries the previous token, and keeps the new one", async () => {
    const before = await app.startWorker();
    const tenant = await createTenant(app.url);
    const businesses = ["rotSelfBiz_000000000001", "rotSelfBiz_000000000002"];
    const ids: string[] = [];
    for (const business of businesses) {
      ids.push(await connectWithOAuth(app, oauth, tenant, "yelp", business));
      await synced(ids.at(-1)!, 1);
    }
    for (const business of businesses) {
      expect(hooksOf(business).map((hook) => hook.webhook_url)).toEqual([
        `${PUBLIC_BASE_URL}/webhooks/yelp/${OLD_TOKEN}`,
      ]);
    }
    const oldHooks = businesses.map((business) => hooksOf(business)[0]!.webhook_id);
    await before.close();

    // The rotation: the new token, the old one kept as previous.
    const during = await app.startWorker({
      YELP_WEBHOOK_TOKEN: NEW_TOKEN,
      YELP_WEBHOOK_TOKEN_PREVIOUS: OLD_TOKEN,
    });
    const due = () =>
      app.sql.query(
        "UPDATE connections SET registration_due_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])",
        [ids],
      );
    await due();
    expect(await during.get(RegistrationSweep).sweep()).toBe(2);
    for (const id of ids) await synced(id, 2);
    for (const [index, business] of businesses.entries()) {
      const hooks = hooksOf(business);
      expect(hooks.map((hook) => hook.webhook_url)).toEqual([
        `${PUBLIC_BASE_URL}/webhooks/yelp/${NEW_TOKEN}`,
      ]);
      expect(hooks[0]!.webhook_id).not.toBe(oldHooks[index]);
      const view = await tenant.admin.get(`/admin/connections/${ids[index]}`);
      expect(view.body.registration).toMatchObject({
        status: "active",
        providerWebhookId: hooks[0]!.webhook_id,
      });
    }

    // Moved once: the next sync finds the webhook current (14 days left, the new URL) and keeps it.
    const posts = () =>
      yelp.server.received.filter((request) => request.method === "POST" && request.path === "/v3/webhooks")
        .length;
    const made = posts();
    await due();
    expect(await during.get(RegistrationSweep).sweep()).toBe(2);
    for (const id of ids) await synced(id, 3);
    expect(posts()).toBe(made);
    expect(yelp.hooks.size).toBe(2);
  });
});
