// GET /admin/providers (api.md): the providers of this installation, from the plugin list, with how
// an account connects (OAuth only where this installation has the provider's client), its sender
// authentications, and whether Leadgate replies and syncs through its API.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

describe("GET /admin/providers", () => {
  const app = useApp({
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_OAUTH_CLIENT_ID: "leadgate-yelp",
      YELP_OAUTH_CLIENT_SECRET: "yelp-client-secret-0123456789",
    },
  });

  it("lists every provider for any key; OAuth where its client is configured (Yelp here, not Thumbtack)", async () => {
    const tenant = await createTenant(app.url);
    for (const admin of [app.operator, tenant.admin]) {
      const answer = await admin.get("/admin/providers");
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        items: [
          {
            id: "staticforms",
            name: "Static Forms",
            connect: "manual",
            inboundAuth: ["bearer", "basic", "header", "token", "apiKey"],
            replies: false,
            sync: false,
          },
          {
            id: "thumbtack",
            name: "Thumbtack",
            connect: "manual",
            inboundAuth: expect.arrayContaining(["basic"]),
            replies: true,
            sync: true,
          },
          { id: "yelp", name: "Yelp", connect: "oauth", inboundAuth: ["none"], replies: true, sync: true },
        ],
      });
    }
  });

  it("answers 401 without a key", async () => {
    const answer = await fetch(`${app.url}/admin/providers`);
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ error: "unauthorized" });
  });
});
