// lead.unanswered (api.md "First replies: templates, business hours, speed to lead"): a lead that
// waits for its first response (awaits_response: a Yelp or Thumbtack lead that arrived fresh) and
// has none past its connection's response target, counted from the provider's creation of the lead
// (else Leadgate's receipt of it) on the business-hours clock where the connection has hours (the
// clock stops while the business is closed), else on the wall clock.
//
// The worker sweeps every UNANSWERED_SWEEP_SECONDS in two statements whose rows are connections,
// never leads: (1) the connections with a lead past their target on the wall clock (business
// seconds are never more than wall seconds, so none is missed), each with its settings once;
// (2) per connection, the count of its leads created before its cutoff, the latest creation time
// that is past target at `now`: on the wall clock `now - target`; on the business clock found here
// by bisection (a lead's business seconds only grow as its creation time moves earlier). Both read
// through the partial index leads_unanswered_since. Only leads younger than
// UNANSWERED_MAX_AGE_SECONDS count, so old history never holds an alert open. One alert per connection: opened with the number of such
// leads (count), its summary restated with the current number at each sweep and its count raised
// to it when more (the most at once: a count never falls); resolved when none of
// the connection's leads is past target unanswered (a business message, an auto-reply or
// mark-replied recorded a first response), or the connection is disabled.
// `run(now)` takes the clock as an argument: tests run the rule at the times they choose.
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { AlertBook } from "./alert-book.js";
import { classify } from "../common/outbound/errors.js";
import { Periodic } from "../common/periodic.js";
import { CONFIG, type AlertsConfig } from "../config/sections.js";
import { PrismaService } from "../database/prisma.service.js";
import { type BusinessHours, businessSeconds } from "../replies/business-hours.js";
import { effectiveSettings, type ReplySettings, responseTargetSql } from "../replies/reply-settings.js";

/** Leads older than this (7 days) are history: they raise no lead.unanswered. */
export const UNANSWERED_MAX_AGE_SECONDS = 7 * 86_400;

/**
 * The session advisory lock a sweep holds: one sweep at a time across workers (two at once would
 * both find no open alert and both raise it, counting its leads twice). A worker that finds it held
 * skips its sweep: another one is making it.
 */
export const SWEEP_LOCK = 4_210_777_002;

/** A connection with a lead past its target on the wall clock, and what its rule needs. */
interface Candidate {
  tenantId: string;
  connectionId: string;
  displayName: string;
  provider: string;
  settings: ReplySettings;
  clientDefaults: ReplySettings;
  tenantDefaults: ReplySettings;
}

/**
 * The cutoff of a connection with business hours: the leads created before it are past `target`
 * seconds at `now` inside `hours`, those created at or after it are not. Bisection to the
 * millisecond over the sweep's age window (a lead's business seconds only grow as its creation time
 * moves earlier, and at `now - target` they are at most `target`); null when no lead of the window
 * can be overdue (the hours hold too few seconds in it).
 */
export function businessCutoff(hours: BusinessHours, target: number, now: Date, oldest: Date): Date | null {
  const overdue = (t: number) => businessSeconds(hours, new Date(t), now) > target;
  let [lo, hi] = [oldest.getTime(), now.getTime() - target * 1000];
  if (hi <= lo || !overdue(lo)) return null;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (overdue(mid)) lo = mid;
    else hi = mid;
  }
  return new Date(hi);
}

@Injectable()
export class UnansweredSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("unanswered-sweep");
  private readonly sweeps = new Periodic(() =>
    this.run(new Date()).catch((error: unknown) =>
      this.logger.warn({
        msg: "unanswered-lead sweep failed; the next one retries",
        errorCode: classify(error).code,
      }),
    ),
  );

  constructor(
    private readonly prisma: PrismaService,
    private readonly alerts: AlertBook,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(this.config.unansweredSweepSeconds * 1000);
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /**
   * Applies the rule at `now` unless another worker's sweep is running (`skipped`): answers the
   * connections with leads past target and how many alerts it resolved.
   */
  async run(now: Date): Promise<{ unanswered: Map<string, number>; resolved: number; skipped?: true }> {
    const client = await this.prisma.pool.connect();
    let broken: Error | undefined;
    try {
      const { rows } = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1) AS held", [
        SWEEP_LOCK,
      ]);
      if (!rows[0]!.held) return { unanswered: new Map(), resolved: 0, skipped: true };
      try {
        return await this.sweep(now);
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [SWEEP_LOCK]).catch((error: Error) => {
          broken = error; // the session goes, and its lock with it
        });
      }
    } finally {
      client.release(broken);
    }
  }

  private async sweep(now: Date): Promise<{ unanswered: Map<string, number>; resolved: number }> {
    const overdue = await this.overdue(now);
    const { rows: alerted } = await this.prisma.pool.query<{ tenantId: string; connectionId: string }>(
      `SELECT tenant_id AS "tenantId", connection_id AS "connectionId" FROM alerts
       WHERE type = 'lead.unanswered' AND status <> 'resolved'`,
    );
    const open = new Set(alerted.map((alert) => alert.connectionId));
    for (const connection of overdue.values()) {
      const occurrence = {
        tenantId: connection.tenantId,
        type: "lead.unanswered" as const,
        connectionId: connection.connectionId,
        summary: `Connection "${connection.displayName}" (${connection.provider}) has ${connection.leads} lead${connection.leads === 1 ? "" : "s"} past the response target without a first response.`,
      };
      // An open alert is restated (the current number; its count the most at once), not counted
      // again at every sweep; a resolved one re-opened takes the number as it is now (`level`).
      const counted = { ...occurrence, count: connection.leads, level: true };
      if (open.has(connection.connectionId)) await this.alerts.restate(undefined, counted);
      else await this.alerts.raise(undefined, counted);
    }
    let resolved = 0;
    for (const alert of alerted.filter((row) => !overdue.has(row.connectionId))) {
      resolved += await this.alerts.clear(undefined, {
        tenantId: alert.tenantId,
        type: "lead.unanswered",
        connectionId: alert.connectionId,
      });
    }
    if (overdue.size > 0 || resolved > 0) {
      this.logger.log({ msg: "unanswered-lead sweep", connections: overdue.size, resolved });
    }
    return {
      unanswered: new Map([...overdue.values()].map((c) => [c.connectionId, c.leads])),
      resolved,
    };
  }

  /** The connections with leads past target at `now`, each with how many: rows per connection, never per lead. */
  private async overdue(now: Date): Promise<Map<string, Candidate & { leads: number }>> {
    const oldest = new Date(now.getTime() - UNANSWERED_MAX_AGE_SECONDS * 1000);
    // The target's SQL form mirrors effectiveSettings (the connection's, else the client's, else
    // the tenant's, else the default): a coarse wall-clock filter only, each connection's cutoff is decided below.
    const { rows: candidates } = await this.prisma.pool.query<Candidate>(
      `SELECT c.tenant_id AS "tenantId", c.id AS "connectionId", c.display_name AS "displayName",
              c.provider, c.settings, cl.defaults AS "clientDefaults", t.defaults AS "tenantDefaults"
       FROM connections c JOIN clients cl ON cl.id = c.client_id JOIN tenants t ON t.id = c.tenant_id
       WHERE c.status <> 'disabled' AND c.id IN (
         SELECT l.connection_id FROM leads l
         JOIN connections c ON c.id = l.connection_id AND c.tenant_id = l.tenant_id
         JOIN clients cl ON cl.id = c.client_id JOIN tenants t ON t.id = l.tenant_id
         WHERE ${UNANSWERED} AND ${SINCE_SQL} > $2::timestamptz
           AND ${SINCE_SQL} < $1::timestamptz - interval '1 second' * ${responseTargetSql("c.settings", "cl.defaults", "t.defaults")})`,
      [now, oldest],
    );
    const cutoffs = new Map<string, Date>();
    for (const connection of candidates) {
      const { businessHours, responseTarget } = effectiveSettings(connection.settings, {
        client: connection.clientDefaults,
        tenant: connection.tenantDefaults,
      });
      const cutoff = businessHours
        ? businessCutoff(businessHours, responseTarget.seconds, now, oldest)
        : new Date(now.getTime() - responseTarget.seconds * 1000);
      if (cutoff) cutoffs.set(connection.connectionId, cutoff);
    }
    if (cutoffs.size === 0) return new Map();
    const { rows: counts } = await this.prisma.pool.query<{ connectionId: string; leads: number }>(
      `SELECT l.connection_id AS "connectionId", count(*)::int AS leads
       FROM unnest($1::uuid[], $2::timestamptz[]) AS x(connection_id, cutoff)
       JOIN leads l ON l.connection_id = x.connection_id
       WHERE ${UNANSWERED} AND ${SINCE_SQL} > $3::timestamptz AND ${SINCE_SQL} < x.cutoff
       GROUP BY l.connection_id`,
      [[...cutoffs.keys()], [...cutoffs.values()], oldest],
    );
    const byId = new Map(candidates.map((c) => [c.connectionId, c]));
    return new Map(
      counts.map(({ connectionId, leads }) => [connectionId, { ...byId.get(connectionId)!, leads }]),
    );
  }
}

/** A lead that waits for its first response (the partial index leads_unanswered_since's predicate). */
const UNANSWERED = "l.awaits_response AND l.first_response_at IS NULL";
/** The time a lead's wait counts from (the index's expression). */
const SINCE_SQL = "COALESCE(l.provider_created_at, l.received_at)";
