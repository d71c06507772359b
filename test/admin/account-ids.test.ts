// Provider account ids: `externalAccountId` reaches provider URL paths, so each
// provider's id has its shape (capabilities `accountId`), checked on POST /admin/connections and
// POST /admin/connections/oauth (400 validation_failed naming the field, nothing written), and a
// provider call never lets a stored id change its path (`..`, `/`). The outcomes asserted are the
// answers, the rows, and the requests a fake Yelp received.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useFakeOAuth } from "../support/fake-providers.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const INBOUND = { yelp: { type: "none" }, thumbtack: { type: "basic" }, staticforms: { type: "bearer" } };
type Provider = keyof typeof INBOUND;

/** Ids that are not the provider's, each with why. */
const BAD: [Provider, string][] = [
  ["yelp", ".."],
  ["yelp", "."],
  ["yelp", "tEstBiz_Kx9Lm2Qp7Rs4Vw/../other"],
  ["yelp", "tEstBiz Kx9Lm2Qp7Rs4Vw"],
  ["yelp", "tEstBiz%2F"],
  ["yelp", "a".repeat(65)],
  ["thumbtack", ".."],
  ["thumbtack", "700000000000000404/webhooks"],
  ["thumbtack", "tt-business-1"],
  ["thumbtack", "7".repeat(33)],
  ["staticforms", ".."],
  ["staticforms", "forms/contact"],
  ["staticforms", "contact?form"],
  ["staticforms", "f".repeat(201)],
];
/** The real shapes (providers.md fixtures), and a Static Forms id with a dot inside. */
const GOOD: [Provider, string][] = [
  ["yelp", "tEstBiz_Kx9Lm2Qp7Rs4Vw"],
  ["thumbtack", "700000000000000404"],
  ["staticforms", "contact-form.v2"],
];

describe("provider account ids", () => {
  const oauth = useFakeOAuth();
  const yelp = useFakeServer({ status: 404, body: {} }, (request) =>
    /^\/v3\/businesses\/[^/]+\/lead_ids$/.test(request.path)
      ? { status: 200, body: { lead_ids: [], has_more: false } }
      : undefined,
  );
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: "yelp-platform-token-0123456789",
      YELP_API_BASE_URL: yelp.url,
      ...oauth.env(),
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });
  const counts = async (tenantId: string) => {
    const count = async (table: string) =>
      (
        await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [
          tenantId,
        ])
      ).rows[0]!.n;
    return {
      connections: await count("connections"),
      attempts: await count("oauth_attempts"),
      audit: await count("audit_entries"),
    };
  };

  /** The routes that take an `externalAccountId`, the providers each takes, the rest of a valid body. */
  const ROUTES = [
    {
      route: "/admin/connections",
      providers: ["yelp", "thumbtack", "staticforms"],
      rest: (provider: Provider) => ({ inboundAuth: INBOUND[provider] }),
    },
    { route: "/admin/connections/oauth", providers: ["yelp", "thumbtack"], rest: () => ({}) },
  ];

  it.each(ROUTES)(
    "POST $route: an id not of the provider's shape is 400 validation_failed on externalAccountId, nothing written",
    async ({ route, providers, rest }) => {
      const tenant = await createTenant(app.url);
      const before = await counts(tenant.tenantId);
      const body = (provider: Provider, externalAccountId: string) => ({
        provider,
        externalAccountId,
        displayName: "An account",
        ...rest(provider),
      });
      for (const [provider, externalAccountId] of BAD.filter(([p]) => providers.includes(p))) {
        const answer = await tenant.admin.post(route, body(provider, externalAccountId));
        expect([provider, externalAccountId, answer.status, answer.body.error]).toEqual([
          provider,
          externalAccountId,
          400,
          "validation_failed",
        ]);
        expect(Object.keys(answer.body.details as object)).toEqual(["externalAccountId"]);
      }
      expect(await counts(tenant.tenantId)).toEqual(before);
      for (const [provider, externalAccountId] of GOOD.filter(([p]) => providers.includes(p))) {
        const answer = await tenant.admin.post(route, body(provider, externalAccountId));
        expect([provider, answer.status]).toEqual([provider, 201]);
      }
    },
  );

  it("an id stored before the rule (`..`, `/`) cannot change the path of a provider call", async () => {
    const outcomes: Record<string, unknown> = {};
    for (const stored of ["..", "x/../../v3/leads/lead_ids"]) {
      const c = await app.createConnection({
        provider: "yelp",
        externalAccountId: `storedBiz_${yelp.received.length}`,
        inboundAuth: { type: "none" },
        credentials: { accessToken: "pasted-token" },
      });
      // Written as an older version could have: straight into the row.
      await app.sql.query("UPDATE connections SET external_account_id = $2 WHERE id = $1", [
        c.connectionId,
        stored,
      ]);
      const seen = yelp.received.length;
      expect((await app.operator.post(`/admin/connections/${c.connectionId}/sync`)).status).toBe(202);
      const [run] = await waitFor(
        () =>
          app.sql
            .query<{ status: string; error: string | null }>(
              `SELECT status, last_error_code AS error FROM jobs
               WHERE connection_id = $1 AND operation = 'reconciliation'`,
              [c.connectionId],
            )
            .then((result) => result.rows),
        (runs) => runs.length === 1 && ["succeeded", "dead"].includes(runs[0]!.status),
      );
      await app.settled();
      // Every call Yelp saw names the stored id as one path segment of the lead-id route.
      const paths = yelp.received.slice(seen).map((request) => request.path);
      for (const path of paths) {
        expect(path).toMatch(/^\/v3\/(businesses|leads\/business)\/[^/]+\/lead_ids$/);
        expect(decodeURIComponent(path.split("/").at(-2)!)).toBe(stored);
      }
      outcomes[stored] = { ...run, calls: paths.length };
    }
    // `..` cannot be kept in place by any encoding: the call is not made, and the run fails for good.
    expect(outcomes).toEqual({
      "..": { status: "dead", error: "invalid_path_parameter", calls: 0 },
      "x/../../v3/leads/lead_ids": { status: "succeeded", error: null, calls: 1 },
    });
  });
});
