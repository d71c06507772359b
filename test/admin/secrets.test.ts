// Secrets: rotating the CRM signing secret (two signatures during the grace period),
// ending a rotation's grace period early, envelopes bound to their table, column and row (a copy
// elsewhere or a truncated tag does not open; secrets:reencrypt binds old unbound envelopes), and
// the warning that a Static Forms apiKey alone is weak.
import { spawnSync } from "node:child_process";
import { createCipheriv, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { TEST_ENCRYPTION_KEY } from "../support/app.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";
import { reencryptAll } from "../../src/reencrypt.js";
import { SecretBox } from "../../src/crypto/secret-box.js";
import { PrismaService } from "../../src/database/prisma.service.js";
import type { ReceivedRequest } from "../support/fake-server.js";

describe("secrets", () => {
  const crm = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
      // The fake CRM is on loopback over http (outbound destination checks).
      DESTINATION_ALLOW_HTTP: "true",
      DESTINATION_ALLOW_CIDRS: "127.0.0.0/8",
    },
  });
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let other: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    tenant = await createTenant(app.url);
    other = await createTenant(app.url);
  });

  /** A Static Forms connection of the tenant (bearer auth), with a CRM destination at `crmPath` if given. */
  const create = async (crmPath?: string, inboundAuth: object = { type: "bearer" }) => {
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${randomBytes(4).toString("hex")}`,
      displayName: "Contact form",
      inboundAuth,
      ...(crmPath ? { settings: { crmDestination: { url: `${crm.url}${crmPath}` } } } : {}),
    });
    expect(created.status).toBe(201);
    return {
      id: created.body.connection.id as string,
      token: created.body.secrets.bearerToken as string,
      crmSecret: created.body.secrets.crmSigningSecret as string,
      answer: created,
    };
  };
  const deliver = (connectionId: string, token: string) =>
    post(`${app.url}/webhooks/staticforms/${connectionId}`, staticFormsDelivery(), {
      authorization: `Bearer ${token}`,
    });
  /** The CRM request of the receipt (waits for it). */
  const crmRequestOf = async (receiptId: string) =>
    (
      await waitFor(
        () => Promise.resolve(crm.received.filter((request) => request.body.includes(receiptId))),
        (requests) => requests.length === 1,
      )
    )[0]!;
  const verifies = (secret: string, request: ReceivedRequest) => {
    try {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };
  const row = async (id: string) =>
    (await app.sql.query("SELECT * FROM connections WHERE id = $1", [id])).rows[0] as Record<string, unknown>;
  const auditOf = async (id: string) =>
    (
      await app.sql.query<{ action: string; details: object }>(
        "SELECT action, details FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
        [id],
      )
    ).rows;
  const crmJobOf = async (connectionId: string) =>
    (
      await app.sql.query<{ status: string; last_error_code: string | null }>(
        "SELECT status, last_error_code FROM jobs WHERE connection_id = $1 AND operation = 'crm-delivery'",
        [connectionId],
      )
    ).rows;

  it("rotate-crm-secret: deliveries carry both signatures during the grace period, then only the new one; audited", async () => {
    const c = await create("/rotating");
    // A long grace, ended below by moving its expiry into the past: the deliveries during it take
    // however long this machine takes.
    const rotated = await tenant.admin.post(`/admin/connections/${c.id}/rotate-crm-secret`, {
      graceSeconds: 600,
    });
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body)).toEqual(["secrets"]);
    expect(Object.keys(rotated.body.secrets)).toEqual(["crmSigningSecret"]);
    const fresh = rotated.body.secrets.crmSigningSecret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(c.crmSecret);

    const during = await deliver(c.id, c.token);
    expect(during.status).toBe(202);
    const signed = await crmRequestOf(during.body.receiptIds[0]!);
    expect(String(signed.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect([verifies(c.crmSecret, signed), verifies(fresh, signed)]).toEqual([true, true]);

    const view = await tenant.admin.get(`/admin/connections/${c.id}`);
    const expires = new Date(view.body.previousCrmSigningSecretExpiresAt as string).getTime();
    expect(expires).toBeGreaterThan(Date.now() + 590_000); // the grace asked for
    expect(expires).toBeLessThanOrEqual(Date.now() + 600_000);
    expect([c.crmSecret, fresh].filter((secret) => view.text.includes(secret))).toEqual([]);
    await app.sql.query(
      "UPDATE connections SET previous_crm_signing_secret_expire_at = now() - interval '1 second' WHERE id = $1",
      [c.id],
    );

    const after = await deliver(c.id, c.token);
    expect(after.status).toBe(202);
    const single = await crmRequestOf(after.body.receiptIds[0]!);
    expect(String(single.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect([verifies(c.crmSecret, single), verifies(fresh, single)]).toEqual([false, true]);
    expect(
      (await tenant.admin.get(`/admin/connections/${c.id}`)).body.previousCrmSigningSecretExpiresAt,
    ).toBe(null);

    // Stored encrypted, never in clear.
    expect(JSON.stringify(await row(c.id))).not.toContain(fresh.slice(6));
    expect(await auditOf(c.id)).toEqual([
      { action: "connection.create", details: expect.any(Object) },
      { action: "connection.rotate-crm-secret", details: { graceSeconds: 600 } },
    ]);
  });

  it("rotate-crm-secret and revoke-previous-secret refuse, writing nothing: no CRM destination, bad grace, another tenant, disabled", async () => {
    const without = await create();
    const refused = await tenant.admin.post(`/admin/connections/${without.id}/rotate-crm-secret`);
    expect([refused.status, refused.body.error]).toEqual([409, "no_crm_destination"]);
    expect(await row(without.id)).toMatchObject({
      crm_signing_secret: null,
      previous_crm_signing_secret: null,
    });

    const c = await create("/refusals");
    const before = await row(c.id);
    const bad: [unknown, string][] = [
      [{ graceSeconds: -1 }, "graceSeconds"],
      [{ graceSeconds: 2_592_001 }, "graceSeconds"],
      [{ graceSeconds: 1.5 }, "graceSeconds"],
      [{ graceSeconds: "60" }, "graceSeconds"],
      [{ apiKey: "a-static-forms-key" }, "apiKey"], // rotate-secret's field, not this route's
    ];
    for (const [body, field] of bad) {
      const answer = await tenant.admin.post(`/admin/connections/${c.id}/rotate-crm-secret`, body);
      expect([answer.status, answer.body.error, Object.keys(answer.body.details ?? {})]).toEqual([
        400,
        "validation_failed",
        [field],
      ]);
    }
    for (const route of ["rotate-crm-secret", "revoke-previous-secret"]) {
      const answer = await other.admin.post(`/admin/connections/${c.id}/${route}`, {});
      expect([route, answer.status, answer.body.error]).toEqual([route, 404, "not_found"]);
    }
    expect(await row(c.id)).toEqual(before);
    expect((await auditOf(c.id)).map((entry) => entry.action)).toEqual(["connection.create"]);
    expect((await auditOf(without.id)).map((entry) => entry.action)).toEqual(["connection.create"]);

    expect((await tenant.admin.delete(`/admin/connections/${c.id}`)).status).toBe(204);
    const disabled = await row(c.id);
    for (const route of ["rotate-crm-secret", "revoke-previous-secret"]) {
      const answer = await tenant.admin.post(`/admin/connections/${c.id}/${route}`, {});
      expect([route, answer.status, answer.body.error]).toEqual([route, 409, "connection_disabled"]);
    }
    expect(await row(c.id)).toEqual(disabled);
    expect((await auditOf(c.id)).map((entry) => entry.action)).toEqual([
      "connection.create",
      "connection.disable",
    ]);
  });

  it("revoke-previous-secret ends both grace periods at once: the old inbound secret is refused, the old signature gone", async () => {
    const c = await create("/revoked");
    const rotated = await tenant.admin.post(`/admin/connections/${c.id}/rotate-secret`);
    const token = rotated.body.secrets.bearerToken as string;
    const crmRotated = await tenant.admin.post(`/admin/connections/${c.id}/rotate-crm-secret`);
    const fresh = crmRotated.body.secrets.crmSigningSecret as string;
    expect((await deliver(c.id, c.token)).status).toBe(202); // default grace: 24 h

    const revoked = await tenant.admin.post(`/admin/connections/${c.id}/revoke-previous-secret`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.connection).toMatchObject({
      id: c.id,
      previousSecretExpiresAt: null,
      previousCrmSigningSecretExpiresAt: null,
    });
    const old = await deliver(c.id, c.token);
    expect([old.status, old.body.error]).toEqual([401, "unauthorized"]);
    const current = await deliver(c.id, token);
    expect(current.status).toBe(202);
    const signed = await crmRequestOf(current.body.receiptIds[0]!);
    expect([verifies(c.crmSecret, signed), verifies(fresh, signed)]).toEqual([false, true]);
    expect(await row(c.id)).toMatchObject({ previous_secrets: null, previous_crm_signing_secret: null });
    expect((await auditOf(c.id)).at(-1)).toEqual({
      action: "connection.revoke-previous-secret",
      details: { inbound: true, crm: true },
    });
  });

  it("a Static Forms apiKey connection carries the apiKey_only warning, on create and in the view", async () => {
    const weak = await create(undefined, { type: "apiKey", apiKey: "sf-public-api-key" });
    expect(weak.answer.body.warnings).toEqual(["apiKey_only"]);
    expect(weak.answer.body.connection.warnings).toEqual(["apiKey_only"]);
    expect((await tenant.admin.get(`/admin/connections/${weak.id}`)).body.warnings).toEqual(["apiKey_only"]);
    const listed = await tenant.admin.get("/admin/connections?limit=200");
    expect(listed.body.items.find((item: { id: string }) => item.id === weak.id).warnings).toEqual([
      "apiKey_only",
    ]);
    const strong = await create();
    expect(strong.answer.body.warnings).toEqual([]);
    expect((await tenant.admin.get(`/admin/connections/${strong.id}`)).body.warnings).toEqual([]);
  });

  describe("envelopes are bound to their place", () => {
    it("an envelope copied to another row does not open there: the delivery is refused, nothing written", async () => {
      const x = await create();
      const y = await create();
      // Someone who can write the database makes y's stored secret x's (whose token they know).
      await app.sql.query(
        "UPDATE connections SET inbound_secrets = (SELECT inbound_secrets FROM connections WHERE id = $1) WHERE id = $2",
        [x.id, y.id],
      );
      const answer = await deliver(y.id, x.token);
      expect([answer.status, answer.body.error]).toEqual([503, "unavailable"]);
      const receipts = await app.sql.query(
        "SELECT count(*)::int AS n FROM receipts WHERE connection_id = $1",
        [y.id],
      );
      expect(receipts.rows).toEqual([{ n: 0 }]);
    });

    it("an envelope copied to another column does not open there: the CRM delivery dies unsent", async () => {
      const c = await create("/rolled-back");
      await tenant.admin.post(`/admin/connections/${c.id}/rotate-crm-secret`);
      // Put the replaced (and perhaps leaked) signing secret back as the current one.
      await app.sql.query(
        "UPDATE connections SET crm_signing_secret = previous_crm_signing_secret WHERE id = $1",
        [c.id],
      );
      expect((await deliver(c.id, c.token)).status).toBe(202);
      const jobs = await waitFor(
        () => crmJobOf(c.id),
        (rows) => rows.length === 1 && rows[0]!.status === "dead",
      );
      expect(jobs).toEqual([{ status: "dead", last_error_code: "secrets_unreadable" }]);
      await app.settled();
      expect(crm.received.filter((request) => request.path === "/rolled-back")).toEqual([]);
    });

    it("a truncated authentication tag is refused", async () => {
      const c = await create();
      const envelope = (await row(c.id)).inbound_secrets as string;
      const parts = envelope.split(".");
      parts[3] = Buffer.from(parts[3]!, "base64url").subarray(0, 12).toString("base64url");
      await app.sql.query("UPDATE connections SET inbound_secrets = $1 WHERE id = $2", [
        parts.join("."),
        c.id,
      ]);
      const answer = await deliver(c.id, c.token);
      expect([answer.status, answer.body.error]).toEqual([503, "unavailable"]);
    });

    it("db:migrate binds unbound (v1) envelopes through secrets:reencrypt; they open again (needs dist/)", async () => {
      const c = await create("/reencrypted");
      const key = Buffer.from(TEST_ENCRYPTION_KEY, "base64");
      const keyId = SecretBox.idOf(key);
      // And one under a key Leadgate does not have: reported, left as it is, the rest goes on.
      const lost = await create();
      const unknownKey = sealV1(Buffer.alloc(32, 3), { accessToken: "x" });
      await app.sql.query("UPDATE connections SET credentials = $1 WHERE id = $2", [unknownKey, lost.id]);
      await app.sql.query(
        "UPDATE connections SET inbound_secrets = $1, credentials = $2, crm_signing_secret = $3 WHERE id = $4",
        [
          sealV1(key, { type: "bearer", bearerToken: c.token }),
          sealV1(key, { accessToken: "provider-token" }),
          sealV1(key, c.crmSecret),
          c.id,
        ],
      );
      // Unbound envelopes are not opened by the API and workers.
      expect((await deliver(c.id, c.token)).status).toBe(503);

      const migrated = spawnSync(process.execPath, ["scripts/migrate.mjs"], {
        env: { ...process.env, ...app.env },
        encoding: "utf8",
      });
      expect(migrated.status).toBe(0);
      expect(migrated.stdout).toContain('"resealed":3,"unreadable":1');
      expect(migrated.stdout).toContain(`"connectionId":"${lost.id}","column":"credentials"`);
      const stored = await row(c.id);
      for (const column of ["inbound_secrets", "credentials", "crm_signing_secret"]) {
        expect([column, String(stored[column]).startsWith(`v2.${keyId}.`)]).toEqual([column, true]);
      }
      const answer = await deliver(c.id, c.token);
      expect(answer.status).toBe(202);
      expect(verifies(c.crmSecret, await crmRequestOf(answer.body.receiptIds[0]!))).toBe(true);
      const api = app.api.app;
      expect(await reencryptAll(api.get(PrismaService), api.get(SecretBox))).toEqual({
        resealed: 0,
        unreadable: 1,
      });
    });
  });
});

/** An envelope as stored before envelopes named their place: v1, the key id as the only additional data. */
function sealV1(key: Buffer, value: unknown): string {
  const keyId = SecretBox.idOf(key);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(keyId));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
  return ["v1", keyId, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
    .join(".");
}
