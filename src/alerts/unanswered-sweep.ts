// lead.unanswered (api.md "First replies: templates, business hours, speed to lead"): a lead that
// waits for its first response (awaits_response: a Yelp or Thumbtack lead that arrived fresh) and
// has none past its connection's response target, counted from the provider's creation of the lead
// (else Leadgate's receipt of it) on the business-hours clock where the connection has hours (the
// clock stops while the business is closed), else on the wall clock.
//
// The worker sweeps every UNANSWERED_SWEEP_SECONDS with one query for all connections: the leads
// past their target on the wall clock (business seconds are never more than wall seconds, so no
// lead past target is missed), read through the partial index leads_unanswered_since; the business
// clock is then applied here. Only leads younger than UNANSWERED_MAX_AGE_SECONDS count, so old
// history never holds an alert open. One alert per connection: opened with the number of such
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
import { businessSeconds } from "../replies/business-hours.js";
import { effectiveSettings, type ReplySettings, responseTargetSql } from "../replies/reply-settings.js";

/** Leads older than this (7 days) are history: they raise no lead.unanswered. */
export const UNANSWERED_MAX_AGE_SECONDS = 7 * 86_400;

/**
 * The session advisory lock a sweep holds: one sweep at a time across workers (two at once would
 * both find no open alert and both raise it, counting its leads twice). A worker that finds it held
 * skips its sweep: another one is making it.
 */
export const SWEEP_LOCK = 4_210_777_002;

interface Candidate {
  tenantId: string;
  connectionId: string;
  displayName: string;
  provider: string;
  settings: ReplySettings;
  defaults: ReplySettings;
  since: Date;
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
    // The target's SQL form mirrors effectiveSettings (the connection's, else the tenant's, else
    // the default): a coarse wall-clock filter only, the rule itself is applied below.
    const { rows } = await this.prisma.pool.query<Candidate>(
      `SELECT l.tenant_id AS "tenantId", l.connection_id AS "connectionId", c.display_name AS "displayName",
              c.provider, c.settings, t.defaults, COALESCE(l.provider_created_at, l.received_at) AS since
       FROM leads l
       JOIN connections c ON c.id = l.connection_id AND c.tenant_id = l.tenant_id
       JOIN tenants t ON t.id = l.tenant_id
       WHERE l.awaits_response AND l.first_response_at IS NULL AND c.status <> 'disabled'
         AND COALESCE(l.provider_created_at, l.received_at) > $1::timestamptz - $2 * interval '1 second'
         AND COALESCE(l.provider_created_at, l.received_at) < $1::timestamptz - interval '1 second' *
               ${responseTargetSql("c.settings", "t.defaults")}`,
      [now, UNANSWERED_MAX_AGE_SECONDS],
    );
    const overdue = new Map<string, Candidate & { leads: number }>();
    for (const lead of rows) {
      const effective = effectiveSettings(lead.settings, lead.defaults);
      const waited = effective.businessHours
        ? businessSeconds(effective.businessHours, lead.since, now)
        : (now.getTime() - lead.since.getTime()) / 1000;
      if (waited <= effective.responseTarget.seconds) continue;
      const connection = overdue.get(lead.connectionId);
      if (connection) connection.leads += 1;
      else overdue.set(lead.connectionId, { ...lead, leads: 1 });
    }
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
}
