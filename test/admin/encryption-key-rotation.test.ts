// Rotating LEADGATE_ENCRYPTION_KEY: the old key opens existing envelopes while it is listed in
// LEADGATE_PREVIOUS_ENCRYPTION_KEYS; `npm run secrets:reencrypt` re-seals everything under the new key.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { TEST_ENCRYPTION_KEY } from "../support/app.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { spawnNode } from "../support/process.js";
import { SecretBox } from "../../src/crypto/secret-box.js";

const NEW_KEY = Buffer.alloc(32, 9).toString("base64");

describe("encryption key rotation", () => {
  // No API of the file's own: every step starts one with the encryption keys of that moment.
  const app = useApp({ api: false, env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  it("old envelopes open during the rotation, are re-sealed by secrets:reencrypt, then only the new key is needed", async () => {
    const before = await app.startApi();
    let connectionId: string;
    let token: string;
    try {
      const tenant = await createTenant(before.url);
      const created = await tenant.admin.post("/admin/connections", {
        provider: "staticforms",
        externalAccountId: "rotating-form",
        displayName: "Form",
        inboundAuth: { type: "bearer" },
        credentials: { accessToken: "provider-token" },
        settings: { crmDestination: { url: "http://127.0.0.1:9/crm" } },
      });
      connectionId = created.body.connection.id as string;
      token = created.body.secrets.bearerToken as string;
      // A notification channel's secret (its signing secret) is re-sealed too.
      const channel = await tenant.admin.post("/admin/notification-channels", {
        type: "webhook",
        url: "http://127.0.0.1:9/alerts",
      });
      expect(channel.status).toBe(201);
    } finally {
      await before.close();
    }
    const deliver = async (keys: Record<string, string>, submissionId: string) => {
      const api = await app.startApi(keys);
      try {
        return (
          await post(
            `${api.url}/webhooks/staticforms/${connectionId}`,
            { event: "form.submitted", data: { submissionId, formData: { name: "Ann" } } },
            { authorization: `Bearer ${token}` },
          )
        ).status;
      } finally {
        await api.close();
      }
    };
    const rotating = {
      LEADGATE_ENCRYPTION_KEY: NEW_KEY,
      LEADGATE_PREVIOUS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEY,
    };
    expect(await deliver(rotating, "during-rotation")).toBe(202);

    const run = spawnNode("dist/reencrypt.js", { DATABASE_URL: app.db.url, ...rotating });
    expect((await run.exited).code).toBe(0);
    expect(run.output()).toContain('"resealed":4');

    const newId = SecretBox.idOf(Buffer.from(NEW_KEY, "base64"));
    const stored = await app.sql.query(
      "SELECT inbound_secrets, credentials, crm_signing_secret FROM connections WHERE id = $1",
      [connectionId],
    );
    const channelSecrets = await app.sql.query<{ secrets: string }>(
      "SELECT secrets FROM notification_channels",
    );
    for (const value of [
      ...Object.values(stored.rows[0] as Record<string, string>),
      ...channelSecrets.rows.map((row) => row.secrets),
    ]) {
      expect(value.startsWith(`v2.${newId}.`)).toBe(true);
    }
    expect(await deliver({ LEADGATE_ENCRYPTION_KEY: NEW_KEY }, "after-rotation")).toBe(202);
    const again = spawnNode("dist/reencrypt.js", {
      DATABASE_URL: app.db.url,
      LEADGATE_ENCRYPTION_KEY: NEW_KEY,
    });
    expect((await again.exited).code).toBe(0);
    expect(again.output()).toContain('"resealed":0');
  });
});
