// The fault suite's Leadgate: API and worker processes (the built `dist/`) on the suite's own
// Postgres and Redis, started, killed and restarted as a deploy script would.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { freePort, spawnNode, type Spawned } from "../../test/support/process.js";
import { PostgresServer, RedisServer } from "./services.js";

export const OPERATOR_KEY = "faults-operator-key-0123456789abcdef";
const ENCRYPTION_KEY = Buffer.alloc(32, 3).toString("base64");

/** One Postgres and one Redis for the whole suite, and a migrated template database. */
export class Services {
  private constructor(
    readonly postgres: PostgresServer,
    readonly redis: RedisServer,
  ) {}

  static async start(): Promise<Services> {
    const postgres = PostgresServer.create(await freePort());
    const redis = new RedisServer(await freePort());
    try {
      await redis.start();
      const template = await postgres.createDatabase("faults_template");
      execFileSync(process.execPath, ["scripts/migrate.mjs"], {
        env: { ...process.env, DATABASE_URL: template },
        stdio: "pipe",
      });
      return new Services(postgres, redis);
    } catch (error) {
      await redis.kill();
      postgres.destroy();
      throw error;
    }
  }

  /** A fresh migrated database of one scenario's own. */
  async database(): Promise<{ url: string; sql: pg.Pool }> {
    const name = `faults_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: this.postgres.url() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE faults_template`);
    await admin.end();
    const url = this.postgres.url(name);
    const sql = new pg.Pool({ connectionString: url, max: 4 });
    sql.on("error", () => undefined); // Postgres is stopped on purpose in some scenarios
    return { url, sql };
  }

  async stop(): Promise<void> {
    await this.redis.kill();
    this.postgres.destroy();
  }
}

export interface Process {
  spawned: Spawned;
  url: string;
}

/** API and worker processes of one scenario (one database, one Redis prefix). */
export class Leadgate {
  readonly apis: Process[] = [];
  readonly workers: Process[] = [];
  private readonly env: Record<string, string>;

  constructor(services: Services, databaseUrl: string, env: Record<string, string> = {}) {
    this.env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: services.redis.url,
      REDIS_PREFIX: `faults-${randomBytes(3).toString("hex")}`,
      LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      // On, but high: every delivery goes through the Redis-backed limit (and its fail-open path when Redis is down).
      WEBHOOK_RATE_LIMIT: "1000000",
      JOB_BACKOFF_BASE_MS: "200",
      DISPATCHER_INTERVAL_MS: "1000",
      // The fake CRM listens on loopback over http.
      DESTINATION_ALLOW_HTTP: "true",
      DESTINATION_ALLOW_CIDRS: "127.0.0.0/8",
      ...env,
    };
  }

  async startApi(port?: number): Promise<Process> {
    const listen = port ?? (await freePort());
    const spawned = spawnNode("dist/main.js", { ...this.env, PORT: String(listen) });
    await spawned.waitFor(/api listening/, 30_000);
    const process = { spawned, url: `http://127.0.0.1:${listen}` };
    this.apis.push(process);
    return process;
  }

  async startWorker(): Promise<Process> {
    const spawned = spawnNode("dist/worker.js", this.env);
    await spawned.waitFor(/worker started/, 30_000);
    const process = { spawned, url: "" };
    this.workers.push(process);
    return process;
  }

  /** SIGKILL: no shutdown hook runs, in-flight requests and jobs are cut. */
  static async kill(process: Process): Promise<void> {
    if (process.spawned.child.exitCode === null) process.spawned.child.kill("SIGKILL");
    await process.spawned.exited;
  }

  /** Stops every process (SIGTERM; SIGKILL after 10 s), also after a failed scenario. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.apis, ...this.workers].map(async (process) => {
        const { child, exited } = process.spawned;
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
