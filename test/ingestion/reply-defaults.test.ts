// Ingest plans a first reply on the EFFECTIVE auto-response (api.md "Inheritance"): a connection
// without its own inherits its tenant's default, read in the same query as the connection (by id
// for Thumbtack, by account for Yelp), and a change of the defaults applies to the next delivery.
import { OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const ENABLED = { enabled: true, text: "Hi {{lead.firstName|there}}, thanks for asking {{business.name}}!" };

describe("ingest: the tenant's default auto-response", () => {
  const app = useApp({
    env: { YELP_WEBHOOK_TOKEN: YELP_TOKEN, LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY },
  });

  const jobsOf = async (connectionId: string) =>
    (
      await app.sql.query<{ operation: string }>(
        "SELECT operation FROM jobs WHERE connection_id = $1 ORDER BY operation",
        [connectionId],
      )
    ).rows.map((row) => row.operation);
  const setDefaults = async (tenantId: string, defaults: object) => {
    const answer = await app.operator.patch(`/admin/tenants/${tenantId}`, { defaults });
    expect(answer.status).toBe(200);
  };
  const thumbtack = (settings: object = {}) =>
    app.createConnection({ provider: "thumbtack", inboundAuth: { type: "basic" }, settings });
  const negotiation = (c: TestConnection, id: string) =>
    post(
      `${app.url}/webhooks/thumbtack/${c.connectionId}`,
      {
        event: { eventType: "NegotiationCreatedV4", webhookID: "1", triggeredAt: "2026-04-02T15:20:07Z" },
        data: { negotiationID: id, createdAt: "2026-04-02T15:20:01Z", customer: { firstName: "Ann" } },
      },
      {
        authorization: `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`,
      },
    );

  it("Thumbtack (looked up by id): no default, no reply job; an enabled tenant default, a reply job", async () => {
    const c = await thumbtack();
    expect((await negotiation(c, "neg-before")).status).toBe(202);
    expect(await jobsOf(c.connectionId)).toEqual(["lead-upsert"]);

    await setDefaults(c.tenantId, { autoResponse: ENABLED });
    expect((await negotiation(c, "neg-after")).status).toBe(202);
    expect(await jobsOf(c.connectionId)).toEqual(["initial-response", "lead-upsert", "lead-upsert"]);
  });

  it("the connection's own auto-response wins over the tenant's (disabled: no job)", async () => {
    const c = await thumbtack({ autoResponse: { enabled: false, text: "Not now." } });
    await setDefaults(c.tenantId, { autoResponse: ENABLED });
    expect((await negotiation(c, "neg-own")).status).toBe(202);
    expect(await jobsOf(c.connectionId)).toEqual(["lead-upsert"]);
  });

  it("Yelp (looked up by account) inherits the tenant's default too", async () => {
    const business = "defaultsBiz_00000000001";
    const c = await app.createConnection({
      provider: "yelp",
      externalAccountId: business,
      inboundAuth: { type: "none" },
    });
    await setDefaults(c.tenantId, { autoResponse: ENABLED });
    const answer = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, {
      time: "2026-03-14T16:05:42+00:00",
      object: "business",
      data: {
        id: business,
        updates: [{ event_type: "NEW_EVENT", event_id: "defEv1", lead_id: "defLead1" }],
      },
    });
    expect(answer.status).toBe(202);
    expect(await jobsOf(c.connectionId)).toEqual(["initial-response", "lead-upsert"]);
  });
});
