// The database pool survives connections dying under Prisma's transactions. Prisma runs `createMany`
// and `updateMany` (and every interactive transaction) as BEGIN … COMMIT on a checked-out
// connection; when the connection dies in between (a Postgres restart, a failover, a terminated
// backend), its COMMIT/ROLLBACK fails too, and Prisma 6.19 then never gives the connection back.
// A pool of 10 that loses 10 connections that way answers nothing again until the process restarts.
import { PrismaService } from "../../src/database/prisma.service.js";
import { useApp } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

describe("database pool", () => {
  const app = useApp({ api: false });
  let prisma: PrismaService;

  beforeAll(() => {
    prisma = new PrismaService(app.config);
    app.defer(() => prisma.onModuleDestroy());
  });

  /** Terminates these backends and waits until each has exited (up to 5 s each). */
  async function terminate(pids: number[]) {
    const { rows } = await app.sql.query<{ gone: boolean }>(
      "SELECT pg_terminate_backend(pid, 5000) AS gone FROM unnest($1::int[]) AS pid",
      [pids],
    );
    expect(rows.filter((row) => row.gone)).toHaveLength(pids.length);
  }

  it("connections that die inside Prisma's transactions go back to the pool: later queries still run", async () => {
    const tenant = await prisma.tenant.create({ data: { name: "pool" } });
    // Hold the row lock so every update waits inside its transaction, then cut those connections.
    const blocker = await app.sql.connect();
    await blocker.query("BEGIN");
    await blocker.query("SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE", [tenant.id]);
    const updates = Array.from({ length: 12 }, (_, i) =>
      prisma.tenant.updateMany({ where: { id: tenant.id }, data: { name: `pool ${i}` } }).then(
        () => "updated",
        () => "failed",
      ),
    );
    // The whole pool, waiting on the lock (the blocker's, or the first waiter's for the tuple). The
    // file's database is its own: no other backend of it waits on a lock.
    const waiting = await waitFor(
      async () =>
        (
          await app.sql.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        ).rows,
      (rows) => rows.length === 10,
    );
    await terminate(waiting.map((row) => row.pid));
    await blocker.query("ROLLBACK");
    blocker.release();
    const outcomes = await Promise.all(updates);
    expect(outcomes.filter((outcome) => outcome === "failed").length).toBeGreaterThanOrEqual(10);

    // The pool has its connections back: plain queries, Prisma queries and transactions all run.
    const { rows } = await prisma.pool.query<{ ok: number }>("SELECT 1 AS ok");
    expect(rows).toEqual([{ ok: 1 }]);
    expect(await prisma.tenant.updateMany({ where: { id: tenant.id }, data: { name: "after" } })).toEqual({
      count: 1,
    });
  });

  it("connections that die before an interactive transaction's COMMIT go back to the pool too", async () => {
    let cut!: () => void;
    const connectionsCut = new Promise<void>((resolve) => (cut = resolve));
    const pids: number[] = []; // each transaction's backend, once it is in its transaction
    const transactions = Array.from({ length: 10 }, () =>
      prisma
        .$transaction(
          async (tx) => {
            const [own] = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
            pids.push(own!.pid);
            await connectionsCut; // idle in transaction meanwhile; COMMIT comes after
          },
          { timeout: 15_000 },
        )
        .then(
          () => "committed",
          () => "failed",
        ),
    );
    await waitFor(
      () => Promise.resolve(pids.length),
      (n) => n === 10,
    );
    await terminate(pids);
    cut();
    expect(await Promise.all(transactions)).toEqual(Array.from({ length: 10 }, () => "failed"));

    const { rows } = await prisma.pool.query<{ ok: number }>("SELECT 1 AS ok");
    expect(rows).toEqual([{ ok: 1 }]);
    expect(await prisma.$transaction(async (tx) => tx.$queryRaw<{ two: number }[]>`SELECT 2 AS two`)).toEqual(
      [{ two: 2 }],
    );
  });
});
