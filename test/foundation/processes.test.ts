// The process contract of api.md's "Running" section, exercised on the compiled entry points
// (`npm test` builds dist/ first): boot-time config errors, start, and clean SIGTERM shutdown.
import { spawnSync } from "node:child_process";
import { useApp } from "../support/harness.js";
import { freePort, spawnNode } from "../support/process.js";

describe("entry points", () => {
  // The API and worker under test are child processes each test starts: no app in this process.
  const app = useApp({ api: false });

  it("refuses to boot without LEADGATE_ENCRYPTION_KEY, in one line naming it", async () => {
    const api = spawnNode("dist/main.js", { DATABASE_URL: app.db.url });
    const { code } = await api.exited;
    expect(code).not.toBe(0);
    const lines = api.output().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/LEADGATE_ENCRYPTION_KEY is required/);
  });

  it("refuses to boot with a malformed LEADGATE_ENCRYPTION_KEY, without printing it", async () => {
    const badKey = "c2hvcnQta2V5LW5vdC0zMi1ieXRlcw==";
    const worker = app.spawn("dist/worker.js", { LEADGATE_ENCRYPTION_KEY: badKey });
    const { code } = await worker.exited;
    expect(code).not.toBe(0);
    const lines = worker.output().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/LEADGATE_ENCRYPTION_KEY must be exactly 32 bytes/);
    expect(worker.output()).not.toContain(badKey);
  });

  it.each([
    [
      "dist/main.js",
      {
        REDIS_SENTINELS: "127.0.0.1:26379",
        REDIS_SENTINEL_NAME: "leadgate",
        REDIS_CLUSTER_NODES: "127.0.0.1:7000",
      },
      /^leadgate: configuration error: REDIS_SENTINELS and REDIS_CLUSTER_NODES are both set/,
    ],
    [
      "dist/worker.js",
      { REDIS_CLUSTER_NODES: "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002", REDIS_PREFIX: "{leadgate}" },
      /^leadgate: configuration error: REDIS_PREFIX may not hold \{ \} with REDIS_CLUSTER_NODES/,
    ],
    [
      "dist/main.js",
      { REDIS_CLUSTER_NODES: "127.0.0.1:7000", REDIS_URL: "redis://127.0.0.1:6379/4" },
      /^leadgate: configuration error: REDIS_URL names database 4, but a Redis Cluster has database 0 only/,
    ],
    [
      "dist/worker.js",
      // (REDIS_CLUSTER_NODES: set by the suite's env under `npm run test:cluster`; empty is unset.)
      { REDIS_SENTINELS: "127.0.0.1:26379", REDIS_CLUSTER_NODES: "" },
      /REDIS_SENTINEL_NAME is required with REDIS_SENTINELS/,
    ],
  ])("%s refuses a Redis topology it cannot honour, in one line (%j)", async (script, env, line) => {
    const child = app.spawn(script, env);
    const { code } = await child.exited;
    expect(code).toBe(78);
    const lines = child.output().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });

  it("starts the API, answers /health, and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const api = app.spawn("dist/main.js", { PORT: String(port) });
    await api.waitFor(/api listening/);
    const response = await fetch(`http://127.0.0.1:${port}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    api.child.kill("SIGTERM");
    expect(await api.exited).toEqual({ code: 0, signal: null });
    expect(api.output()).toMatch(/api stopped/);
  });

  it("starts the worker without an HTTP port and exits 0 on SIGTERM", async () => {
    const worker = app.spawn("dist/worker.js");
    await worker.waitFor(/worker started/);
    expect(worker.output()).not.toMatch(/listening/);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toMatch(/worker stopped/);
  });
});

describe("npm run db:migrate", () => {
  const app = useApp({ api: false });
  beforeAll(async () => {
    await app.sql.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
  });

  const migrate = () =>
    spawnSync("node", ["scripts/migrate.mjs"], {
      env: { ...process.env, DATABASE_URL: app.db.url },
      encoding: "utf8",
    });

  it("applies every migration to an empty database, then is a no-op", async () => {
    const first = migrate();
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/successfully applied/);
    const tables = await app.sql.query(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(tables.rows.map((row: { tablename: string }) => row.tablename)).toEqual(
      expect.arrayContaining([
        "tenants",
        "api_keys",
        "connections",
        "receipts",
        "jobs",
        "job_attempts",
        "leads",
      ]),
    );

    const second = migrate();
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/No pending migrations to apply/);
    const after = await app.sql.query(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    expect(after.rows).toEqual(tables.rows);
  }, 90_000); // two runs of the Prisma CLI, each over every migration: slow on a busy 2-core machine
});
