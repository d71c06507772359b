// Replacing a connection's credentials (a reconnect's new grant, pasted credentials) while a token
// refresh of the old grant is on its way: the refresh must not store its token over the new one
// ("a reconnect racing an in-flight token refresh can keep the old token"). The store
// ends the refresh lease with the replacement, so the refresher, which stores only while it holds
// the lease, finds it gone.
import { randomUUID } from "node:crypto";
import { ConnectionSubstates } from "../../src/connections/connection-substates.js";
import { ProviderTokens } from "../../src/connections/provider-tokens.js";
import { SecretBox } from "../../src/crypto/secret-box.js";
import { secretPlace } from "../../src/crypto/stored-secrets.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

describe("credentials replaced during a token refresh", () => {
  const app = useApp({ worker: true, env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  it("the refresh of the old grant does not store its token over the pasted one", async () => {
    const tenant = await createTenant(app.url);
    const created = await app.operator.post("/admin/connections", {
      tenantId: tenant.tenantId,
      provider: "thumbtack",
      externalAccountId: "7700100001",
      displayName: "Thumbtack",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "old-access", refreshToken: "old-refresh" },
    });
    expect(created.status).toBe(201);
    const ref = { tenantId: tenant.tenantId, id: created.body.connection.id as string };
    const owner = { ...ref, provider: "thumbtack" };

    // A refresh of the old grant takes the lease, then the provider answers slowly...
    const substates = app.worker.get(ConnectionSubstates);
    const me = randomUUID();
    expect(await substates.takeRefreshLease(ref, me, 60_000)).toBeDefined();
    // ...while an operator pastes new credentials.
    const patched = await app.operator.patch(`/admin/connections/${ref.id}`, {
      credentials: { accessToken: "pasted-access", refreshToken: "pasted-refresh" },
    });
    expect(patched.status).toBe(200);
    // The refresher's answer arrives: it is not stored.
    const box = app.worker.get(SecretBox);
    const stored = await substates.storeRefreshedToken(ref, me, {
      sealed: box.seal(
        { accessToken: "refreshed-from-old", refreshToken: "r2" },
        secretPlace("credentials", ref.id),
      ),
      expiresAt: null,
      scopes: [],
    });
    expect(stored).toBe(false);
    expect(await app.worker.get(ProviderTokens).current(owner)).toBe("pasted-access");
    // And the lease is free for the next refresh.
    expect(await substates.takeRefreshLease(ref, randomUUID(), 60_000)).toBeDefined();
  });
});
