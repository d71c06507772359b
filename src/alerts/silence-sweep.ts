// connection.silent: a connection that usually receives deliveries and has received none for far
// longer than its usual gap. The rule learns each connection's rhythm from its own receipts:
//
// - history: its last SILENCE_HISTORY + 1 receipts (before `now`), so SILENCE_HISTORY gaps between them;
// - it must have at least SILENCE_MIN_GAPS gaps (a connection with fewer has no usual rhythm yet);
// - its usual gap is the 90th percentile of those gaps (a busy day's bursts do not make it tiny, a
//   rare long weekend does not make it huge);
// - it is silent when the time since its last receipt exceeds SILENCE_FACTOR × usual gap, and never
//   before SILENCE_FLOOR (a connection with minutes between deliveries is not silent after an hour
//   of lunch).
//
// The worker sweeps active connections every SILENCE_SWEEP_MS: a silent one raises (or counts on)
// its connection.silent alert; one that is not silent any more (a delivery arrived) resolves it.
// `run(now)` takes the clock as an argument: tests run the rule at the times they choose.
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { AlertBook } from "./alert-book.js";
import { classify } from "../common/outbound/errors.js";
import { Periodic } from "../common/periodic.js";
import { PrismaService } from "../database/prisma.service.js";

export const SILENCE_HISTORY = 50;
export const SILENCE_MIN_GAPS = 10;
export const SILENCE_FACTOR = 6;
export const SILENCE_FLOOR_SECONDS = 3600;
const SILENCE_SWEEP_MS = 5 * 60_000;

interface Silent {
  id: string;
  tenantId: string;
  displayName: string;
  provider: string;
  usualSeconds: number;
  silentSeconds: number;
}

@Injectable()
export class SilenceSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("silence-sweep");
  private readonly sweeps = new Periodic(() =>
    this.run(new Date()).catch((error: unknown) =>
      this.logger.warn({
        msg: "silence sweep failed; the next one retries",
        errorCode: classify(error).code,
      }),
    ),
  );

  constructor(
    private readonly prisma: PrismaService,
    private readonly alerts: AlertBook,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(SILENCE_SWEEP_MS);
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /** Applies the rule at `now`: answers the connections found silent and how many alerts it resolved. */
  async run(now: Date): Promise<{ silent: string[]; resolved: number }> {
    // Platform-wide by nature (each connection's own receipts decide); the writes are per tenant.
    const { rows } = await this.prisma.pool.query<Silent & { silent: boolean; alerted: boolean }>(
      `SELECT c.id, c.tenant_id AS "tenantId", c.display_name AS "displayName", c.provider,
              h.usual AS "usualSeconds", extract(epoch FROM $1::timestamptz - h.last_at)::float8 AS "silentSeconds",
              extract(epoch FROM $1::timestamptz - h.last_at) > greatest($4 * h.usual, $5) AS silent,
              EXISTS (SELECT 1 FROM alerts a WHERE a.tenant_id = c.tenant_id AND a.connection_id = c.id
                        AND a.type = 'connection.silent' AND a.status <> 'resolved') AS alerted
       FROM connections c
       CROSS JOIN LATERAL (
         SELECT max(at) AS last_at, count(gap) AS gaps,
                percentile_cont(0.9) WITHIN GROUP (ORDER BY gap) AS usual
         FROM (SELECT at, extract(epoch FROM at - lead(at) OVER (ORDER BY at DESC))::float8 AS gap
               FROM (SELECT received_at AS at FROM receipts r
                     WHERE r.connection_id = c.id AND r.tenant_id = c.tenant_id AND r.received_at <= $1::timestamptz
                     ORDER BY received_at DESC LIMIT $2 + 1) latest) gaps
       ) h
       WHERE c.status = 'active' AND h.gaps >= $3`,
      [now, SILENCE_HISTORY, SILENCE_MIN_GAPS, SILENCE_FACTOR, SILENCE_FLOOR_SECONDS],
    );
    const silent = rows.filter((row) => row.silent);
    for (const connection of silent) {
      await this.alerts.raise(undefined, {
        tenantId: connection.tenantId,
        type: "connection.silent",
        connectionId: connection.id,
        summary: `Connection "${connection.displayName}" (${connection.provider}) has received no delivery for ${hours(connection.silentSeconds)}; it usually receives one every ${hours(connection.usualSeconds)} or less.`,
      });
    }
    let resolved = 0;
    for (const connection of rows.filter((row) => row.alerted && !row.silent)) {
      resolved += await this.alerts.clear(undefined, {
        tenantId: connection.tenantId,
        type: "connection.silent",
        connectionId: connection.id,
      });
    }
    if (silent.length > 0 || resolved > 0) {
      this.logger.log({ msg: "silence sweep", silent: silent.length, resolved });
    }
    return { silent: silent.map((row) => row.id), resolved };
  }
}

function hours(seconds: number): string {
  return seconds >= 3600
    ? `${(seconds / 3600).toFixed(1)} h`
    : `${Math.max(1, Math.round(seconds / 60))} min`;
}
