// `npm start` (scripts/start.mjs) as a user runs it: no keys given, an empty database, the local
// Redis. First run writes the keys file and prints the operator key once, migrates, and runs the
// API and a worker that carry a Static Forms delivery to a CRM; SIGINT stops both with exit 0.
// A second run reuses the file as it is, and a dying worker takes the API down with it.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { adminAs, staticFormsDelivery } from "../support/admin.js";
import { TEST_DESTINATION_ENV, testRedisPrefix } from "../support/app.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type FakeServer, startFakeServer } from "../support/fake-server.js";
import { post } from "../support/http.js";
import { freePort, type Spawned, spawnNode } from "../support/process.js";
import { waitFor } from "../support/wait.js";

/** Migrating an empty database and booting both processes takes a while on a busy machine. */
const BOOT_MS = 90_000;

describe("npm start", () => {
  let db: TestDatabase;
  let crm: FakeServer;
  let dir: string;
  let envFile: string;
  let port: number;
  let env: Record<string, string>;
  const started: Spawned[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.sql.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public"); // start.mjs migrates it
    crm = await startFakeServer({ status: 200, body: {} });
    dir = mkdtempSync(join(tmpdir(), "leadgate-start-"));
    envFile = join(dir, ".env");
    port = await freePort();
    env = {
      DATABASE_URL: db.url,
      REDIS_PREFIX: testRedisPrefix(),
      PORT: String(port),
      LEADGATE_ENV_FILE: envFile,
      ...TEST_DESTINATION_ENV, // the fake CRM listens on loopback over http
    };
  });
  afterAll(async () => {
    for (const run of started) {
      if (run.child.exitCode === null && run.child.signalCode === null) {
        run.child.kill("SIGTERM");
        await run.exited;
      }
    }
    await crm.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async () => {
    const run = spawnNode("scripts/start.mjs", env);
    started.push(run);
    await run.waitFor(/"api listening"/, BOOT_MS);
    await run.waitFor(/"worker started"/, BOOT_MS);
    return run;
  };
  const api = () => `http://127.0.0.1:${port}`;
  const keysFile = () => {
    const text = readFileSync(envFile, "utf8");
    const value = (name: string) => new RegExp(`^${name}=(.*)$`, "m").exec(text)?.[1];
    return {
      text,
      mode: statSync(envFile).mode & 0o777,
      encryptionKey: value("LEADGATE_ENCRYPTION_KEY"),
      operatorKey: value("LEADGATE_BOOTSTRAP_OPERATOR_KEY"),
    };
  };
  const occurrences = (text: string, part: string) => text.split(part).length - 1;
  const crmCalls = (count: number) =>
    waitFor(
      () => Promise.resolve(crm.received.filter((request) => request.path === "/crm")),
      (calls) => calls.length >= count,
    );

  let connection: { id: string; bearerToken: string; signingSecret: string };

  it(
    "first run: writes the keys, prints the operator key once, serves, delivers end to end, stops on SIGINT",
    async () => {
      const run = await start();

      const keys = keysFile();
      expect(keys.mode).toBe(0o600);
      expect(Buffer.from(keys.encryptionKey ?? "", "base64")).toHaveLength(32);
      expect(keys.operatorKey).toMatch(/^lg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
      const operatorKey = keys.operatorKey!;
      expect(occurrences(run.output(), operatorKey)).toBe(1);
      expect(run.output()).toContain(envFile);
      expect(run.output()).not.toContain(keys.encryptionKey);
      expect(run.output()).toMatch(/applied/); // the empty database was migrated

      expect((await fetch(`${api()}/health/ready`)).status).toBe(200);
      // Both processes with 2 malloc arenas (docs/operations.md), unless the environment says otherwise.
      for (const role of ["api", "worker"]) {
        const pid = Number(new RegExp(`${role} started \\(pid (\\d+)\\)`).exec(run.output())?.[1]);
        expect(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")).toContain("MALLOC_ARENA_MAX=2");
      }

      const tenant = await adminAs(api(), operatorKey).post("/admin/tenants", { name: "First-run agency" });
      expect(tenant.status).toBe(201);
      const created = await adminAs(api(), tenant.body.apiKey.key).post("/admin/connections", {
        provider: "staticforms",
        externalAccountId: "contact-form",
        displayName: "Contact form",
        inboundAuth: { type: "bearer" },
        settings: { crmDestination: { url: `${crm.url}/crm` } },
      });
      expect(created.status).toBe(201);
      connection = {
        id: created.body.connection.id,
        bearerToken: created.body.secrets.bearerToken,
        signingSecret: created.body.secrets.crmSigningSecret,
      };

      const delivered = await post(
        `${api()}/webhooks/staticforms/${connection.id}`,
        staticFormsDelivery("sub_first"),
        {
          authorization: `Bearer ${connection.bearerToken}`,
        },
      );
      expect(delivered.status).toBe(202);
      const [call] = await crmCalls(1);
      expect(
        new Webhook(connection.signingSecret).verify(call!.body, call!.headers as Record<string, string>),
      ).toMatchObject({
        type: "lead.created",
        data: { provider: "staticforms" },
      });

      run.child.kill("SIGINT");
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(run.output()).toMatch(/"api stopped"/);
      expect(run.output()).toMatch(/"worker stopped"/);
    },
    3 * BOOT_MS,
  );

  it(
    "second run: reuses the keys file untouched; a dying worker stops the API and the exit is non-zero",
    async () => {
      const before = keysFile();
      const run = await start();

      expect(keysFile()).toEqual(before);
      expect(run.output()).not.toContain(before.operatorKey);
      expect((await adminAs(api(), before.operatorKey).get("/admin/tenants")).status).toBe(200);
      // The connection's bearer token is stored encrypted: it verifies only under the same encryption key.
      const delivered = await post(
        `${api()}/webhooks/staticforms/${connection.id}`,
        staticFormsDelivery("sub_second"),
        {
          authorization: `Bearer ${connection.bearerToken}`,
        },
      );
      expect(delivered.status).toBe(202);
      await crmCalls(2);

      const workerPid = Number(/worker started \(pid (\d+)\)/.exec(run.output())?.[1]);
      process.kill(workerPid, "SIGKILL");
      const exit = await run.exited;
      expect(exit.code).not.toBe(0);
      expect(run.output()).toMatch(/"api stopped"/);
    },
    3 * BOOT_MS,
  );
});
