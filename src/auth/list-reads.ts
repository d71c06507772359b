// Where an admin list or report reads (api.md "Running", DATABASE_REPLICA_URL): the read replica
// when there is one, else (and for 5 s after the caller's own write) the primary. The routes that
// read through here: GET /admin/leads (its search `q` too), /admin/receipts, /admin/jobs (the lists),
// /admin/jobs/summary, /admin/speed-to-lead and /admin/overview (reports of those). Detail views,
// sessions, API keys and every read that decides a write (a replay's selection and its dry run)
// never do. These are the admin reads that scan, so each tenant runs at most ADMIN_READS_PER_TENANT
// of them at once in this process: one tenant's searches cannot hold the whole admin pool.
import { CONFIG, type AuthConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { Gauge } from "prom-client";
import { AppError } from "../common/app-error.js";
import { DestinationLimits } from "../common/outbound/destination-limits.js";
import type { Principal } from "./principal.js";
import { RecentWrites } from "./recent-writes.js";
import { PrismaService } from "../database/prisma.service.js";
import { ReadReplica } from "../database/read-replica.js";
import { Metrics } from "../observability/metrics.js";

/** After a replica failure, this process's lists read the primary this long before trying it again. */
const REPLICA_RETRY_MS = 10_000;

/**
 * How long a read over its tenant's share waits for one of the tenant's reads to end: as long as a
 * read waits for a connection of a full pool (PrismaService's connectionTimeoutMillis). Not at all
 * when the tenant's reads in flight have all run longer than that already (DestinationLimits).
 */
const SHARE_WAIT_MS = 2_000;

/** Whose share of the admin pool a read takes: its tenant's; an operator's own (key or user). */
const shareOf = (principal: Principal): string =>
  principal.tenantId ?? `operator:${principal.keyId ?? principal.userId}`;

const logger = new Logger("read-replica");

/**
 * What failed, without the message: a Prisma error's message may quote the query's arguments (a
 * list's search term is a lead's name or email).
 */
function failure(error: unknown): { error: string; code?: string } {
  if (!(error instanceof Error)) return { error: typeof error };
  const code = (error as { code?: unknown }).code;
  return { error: error.name, ...(typeof code === "string" ? { code } : {}) };
}

/**
 * How far behind the replica's data is, read from the replica at each scrape: 0 while its WAL
 * receiver streams and it has applied all it received; else the time since the last transaction it
 * applied (an upper bound of the lag while it catches up, and the age of its data while replication
 * is broken: received and applied WAL then agree, so only the receiver's state tells); +Inf while the
 * replica does not answer, or has applied nothing yet (as far behind as can be: an alert on the lag
 * fires, and lists read the primary meanwhile). A role without pg_read_all_stats sees the receiver's
 * row (while one runs) but not its status: then a running receiver counts as streaming.
 */
const LAG = `
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE COALESCE(status, 'streaming') = 'streaming')
       AND pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
  ELSE COALESCE(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 'Infinity')
END::float8 AS lag`;

function replicaLagGauge(metrics: Metrics, replica: PrismaService): void {
  new Gauge({
    name: "leadgate_replica_lag_seconds",
    help: "How far the read replica (DATABASE_REPLICA_URL) is behind: 0 while it streams and applied all WAL it received, else seconds since the last transaction it applied (also while replication is broken); +Inf while it does not answer.",
    registers: [metrics.registry],
    async collect() {
      this.reset();
      try {
        const { rows } = await replica.pool.query<{ lag: number }>(LAG);
        this.set(rows[0]?.lag ?? 0);
      } catch {
        this.set(Number.POSITIVE_INFINITY); // the replica does not answer: never a false 0
      }
    },
  });
}

@Injectable()
export class ListReads {
  private replicaFailedAt = Number.NEGATIVE_INFINITY;
  /** Each tenant's reads running now in this process, under its share's key (shareOf). */
  private readonly shares: DestinationLimits;

  constructor(
    private readonly primary: PrismaService,
    private readonly replica: ReadReplica,
    private readonly writes: RecentWrites,
    private readonly metrics: Metrics,
    @Inject(CONFIG.auth) private readonly config: AuthConfig,
  ) {
    if (replica.client) replicaLagGauge(metrics, replica.client);
    this.shares = new DestinationLimits(config.adminReadsPerTenant, SHARE_WAIT_MS);
  }

  /**
   * Runs a list or report read (`read` only reads) in one of its tenant's ADMIN_READS_PER_TENANT
   * slots, so the admin pool keeps connections for the other tenants whatever one of them sends at
   * once; without a slot in time: `429 rate_limited` with Retry-After, nothing read.
   */
  async run<T>(principal: Principal, read: (db: PrismaService) => Promise<T>): Promise<T> {
    const release = await this.shares.acquire(shareOf(principal));
    if (!release) {
      throw new AppError(
        429,
        "rate_limited",
        `This tenant already runs ${this.config.adminReadsPerTenant} admin lists or searches at once (ADMIN_READS_PER_TENANT); retry when one has answered.`,
        undefined,
        { "retry-after": "1" },
      );
    }
    try {
      return await this.routed(principal, read);
    } finally {
      release();
    }
  }

  /**
   * The read on the replica, or on the primary when there is none, when `principal` wrote in the
   * last 5 s, or when the replica failed in the last 10 s. A read that fails on the replica is run
   * again on the primary: the list answers while the replica is down.
   */
  private async routed<T>(principal: Principal, read: (db: PrismaService) => Promise<T>): Promise<T> {
    const replica = this.replica.client;
    if (
      replica === undefined ||
      Date.now() - this.replicaFailedAt < REPLICA_RETRY_MS ||
      (await this.writes.wroteRecently(principal))
    ) {
      return read(this.primary);
    }
    try {
      return await read(replica);
    } catch (error) {
      this.replicaFailedAt = Date.now();
      this.metrics.replicaFallbacks.inc();
      logger.warn({
        msg: "read replica failed; admin lists read the primary for 10 s",
        ...failure(error),
      });
      return read(this.primary);
    }
  }
}
