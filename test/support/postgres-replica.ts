// A private Postgres primary with a streaming read replica, for the tests of DATABASE_REPLICA_URL:
// initdb in a temp dir (trust auth, replication allowed from loopback: initdb's own pg_hba), on free
// loopback ports, the `leadgate` database migrated with scripts/migrate.mjs as global-setup does,
// then `pg_basebackup -R` and the standby started. The machine's Postgres on 5432 is not touched.
// Postgres refuses to run as root: as root, every command runs as the `postgres` user.
import { execFile } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./process.js";
import { waitFor } from "./wait.js";

const run = promisify(execFile);
const BIN = process.env.LEADGATE_TEST_PG_BIN ?? "/usr/lib/postgresql/15/bin";
const asRoot = process.getuid?.() === 0;

/** Runs a Postgres program (as `postgres` when this process is root). */
function postgresTool(program: string, args: string[]) {
  const path = join(BIN, program);
  return asRoot ? run("runuser", ["-u", "postgres", "--", path, ...args]) : run(path, args);
}

export interface PostgresWithReplica {
  /** DATABASE_URL of the migrated `leadgate` database on the primary. */
  primaryUrl: string;
  /** The same database on the replica (DATABASE_REPLICA_URL). */
  replicaUrl: string;
  /** Plain pools for writing and reading the truth on each side. */
  primary: pg.Pool;
  replica: pg.Pool;
  /** Stops applying WAL on the replica (it keeps answering, with the data as it stood). */
  pauseReplay(): Promise<void>;
  /** Applies WAL again, and resolves once the replica has everything the primary committed. */
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary committed so far. */
  caughtUp(): Promise<void>;
  /**
   * Breaks replication while the replica keeps answering: its WAL receiver is pointed at a port
   * nothing listens on. Resolves once it no longer streams; the returned function mends it and
   * resolves once the replica caught up.
   */
  breakReplication(): Promise<() => Promise<void>>;
  /** Stops the replica (fast shutdown): its connections are closed and new ones refused. */
  stopReplica(): Promise<void>;
  /** Stops both servers and removes their files. */
  stop(): Promise<void>;
}

const urlOf = (port: number) => `postgresql://postgres@127.0.0.1:${port}/leadgate`;

function pool(url: string): pg.Pool {
  const created = new pg.Pool({ connectionString: url, max: 2 });
  created.on("error", () => undefined); // the replica is stopped under it on purpose
  return created;
}

export async function startPostgresWithReplica(): Promise<PostgresWithReplica> {
  const dir = mkdtempSync("/tmp/leadgate-replica-");
  if (asRoot) await run("chown", ["postgres:", dir]);
  const [primaryDir, replicaDir] = [join(dir, "primary"), join(dir, "replica")];
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const start = (data: string, port: number) =>
    postgresTool("pg_ctl", ["-D", data, "-o", `-p ${port}`, "-l", `${data}.log`, "-w", "-t", "20", "start"]);
  const stopServer = (data: string) =>
    postgresTool("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]).catch(() => undefined);

  const removeAll = async () => {
    await stopServer(replicaDir);
    await stopServer(primaryDir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await postgresTool("initdb", [
      "-D",
      primaryDir,
      "-U",
      "postgres",
      "-A",
      "trust",
      "-E",
      "UTF8",
      "--no-sync",
    ]);
    const settings = [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "wal_level = replica",
      "fsync = off",
      "full_page_writes = off",
    ];
    appendFileSync(join(primaryDir, "postgresql.conf"), `${settings.join("\n")}\n`);
    await start(primaryDir, primaryPort);
    const admin = new pg.Client({
      connectionString: `postgresql://postgres@127.0.0.1:${primaryPort}/postgres`,
    });
    await admin.connect();
    await admin.query("CREATE DATABASE leadgate");
    await admin.end();
    await run("node", ["scripts/migrate.mjs"], { env: { ...process.env, DATABASE_URL: urlOf(primaryPort) } });

    await postgresTool("pg_basebackup", [
      "-D",
      replicaDir,
      "-R",
      "-c",
      "fast",
      "-h",
      "127.0.0.1",
      "-p",
      String(primaryPort),
      "-U",
      "postgres",
    ]);
    await start(replicaDir, replicaPort);
  } catch (error) {
    await removeAll(); // nothing of a failed start stays running
    throw error;
  }

  const primary = pool(urlOf(primaryPort));
  const replica = pool(urlOf(replicaPort));

  const caughtUp = async () => {
    const { rows } = await primary.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
    await waitFor(
      async () =>
        (
          await replica.query<{ done: boolean }>("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [
            rows[0]!.lsn,
          ])
        ).rows[0]!.done,
      (done) => done,
    );
  };
  await caughtUp();

  return {
    primaryUrl: urlOf(primaryPort),
    replicaUrl: urlOf(replicaPort),
    primary,
    replica,
    caughtUp,
    async pauseReplay() {
      await replica.query("SELECT pg_wal_replay_pause()");
      await waitFor(
        async () =>
          (await replica.query<{ state: string }>("SELECT pg_get_wal_replay_pause_state() AS state")).rows[0]!
            .state,
        (state) => state === "paused",
      );
    },
    async resumeReplay() {
      await replica.query("SELECT pg_wal_replay_resume()");
      await caughtUp();
    },
    async breakReplication() {
      const streaming = async () =>
        (await replica.query("SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'")).rowCount === 1;
      const { rows } = await replica.query<{ primary_conninfo: string }>("SHOW primary_conninfo");
      const setConninfo = async (conninfo: string) => {
        await replica.query(`ALTER SYSTEM SET primary_conninfo = '${conninfo.replaceAll("'", "''")}'`);
        await replica.query("SELECT pg_reload_conf()");
      };
      await setConninfo(`host=127.0.0.1 port=${await freePort()} user=postgres`);
      await waitFor(streaming, (up) => !up);
      return async () => {
        await setConninfo(rows[0]!.primary_conninfo);
        await waitFor(streaming, (up) => up);
        await caughtUp();
      };
    },
    async stopReplica() {
      await stopServer(replicaDir);
    },
    async stop() {
      await Promise.all([primary.end(), replica.end()]);
      await removeAll();
    },
  };
}
