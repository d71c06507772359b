// Disposable PostgreSQL and Redis servers of the fault suite's own, started from the installed
// binaries on other ports, so the suite can stop, kill and restart them without touching the
// machine's services.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

function postgresBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort().reverse() : [];
  const found = versions.map((version) => join(root, version, "bin", name)).find((path) => existsSync(path));
  return found ?? name;
}

/** Postgres refuses to run as root: as root, its commands run as the `postgres` user. */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
}

function run(command: string, args: string[]): void {
  const [file, argv] = asPostgres(command, args);
  execFileSync(file, argv, { stdio: "pipe" });
}

export class PostgresServer {
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static create(port: number): PostgresServer {
    const dir = mkdtempSync(join(tmpdir(), "leadgate-faults-pg-"));
    chmodSync(dir, 0o700);
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
      chownSync(dir, uid, gid);
    }
    run(postgresBin("initdb"), [
      "-D",
      join(dir, "data"),
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-sync",
    ]);
    const server = new PostgresServer(port, dir);
    server.start();
    return server;
  }

  url(database = "postgres"): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  start(): void {
    const options = [
      `-p ${this.port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${this.dir}`,
      "-c fsync=off",
      "-c max_connections=300",
    ].join(" ");
    run(postgresBin("pg_ctl"), [
      "-D",
      join(this.dir, "data"),
      "-l",
      join(this.dir, "log"),
      "-o",
      options,
      "-w",
      "start",
    ]);
  }

  /** `immediate`: like a crash (no checkpoint, connections cut). */
  stop(mode: "fast" | "immediate" = "immediate"): void {
    run(postgresBin("pg_ctl"), ["-D", join(this.dir, "data"), "-m", mode, "-w", "stop"]);
  }

  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  destroy(): void {
    try {
      this.stop("immediate");
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class RedisServer {
  private child: ChildProcess | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts an empty Redis (nothing persisted: a restart loses every key, as a crash of a cache node would). */
  async start(): Promise<void> {
    const child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("redis-server did not start")), 10_000);
      child.stdout?.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("Ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", (code) => reject(new Error(`redis-server exited with ${code}`)));
    });
  }

  /** SIGKILL: Redis is gone at once, with everything it held. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
}
