// Speed to lead in SQL (api.md "First replies: templates, business hours, speed to lead"): one
// statement over the window's leads, per connection and overall (GROUPING SETS), and per UTC day
// when asked. The index of migration 20261210010000_speed_to_lead_report serves it.
import { Injectable } from "@nestjs/common";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import { Prisma } from "../generated/prisma/client.js";
import { API_PROVIDERS } from "../providers/capabilities.js";
import { responseTargetSql } from "../replies/reply-settings.js";

export type Clock = "wall" | "business";

export interface SpeedFilter {
  tenantId?: string;
  clientId?: string;
  connectionId?: string;
  from: Date;
  to: Date;
  clock: Clock;
  byDay: boolean;
}

/** One group's figures: a connection's (connectionId and target set), the overall (both null) or a day's. */
export interface SpeedRow {
  connectionId: string | null;
  day: string | null;
  targetSeconds: number | null;
  leads: number;
  responded: number;
  withinTarget: number;
  auto: number;
  medianSeconds: number | null;
  p90Seconds: number | null;
}

@Injectable()
export class SpeedToLeadRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Whether the scope has the connection (a foreign one is as unknown as a missing one): on the
   * primary, since it decides a 404 (a connection just made is never unknown).
   */
  async hasConnection(scope: TenantScope, filter: SpeedFilter, id: string): Promise<boolean> {
    const tenantId = tenantParam(scope);
    const rows = await this.prisma.$queryRaw<unknown[]>`
      SELECT 1 FROM connections
      WHERE id = ${id}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
        AND (${filter.tenantId ?? null}::uuid IS NULL OR tenant_id = ${filter.tenantId ?? null}::uuid)`;
    return rows.length > 0;
  }

  /** Whether the scope has the live client (a foreign one is as unknown as a missing one). */
  async hasClient(scope: TenantScope, filter: SpeedFilter, id: string): Promise<boolean> {
    const tenantId = tenantParam(scope);
    const rows = await this.prisma.$queryRaw<unknown[]>`
      SELECT 1 FROM clients
      WHERE id = ${id}::uuid AND deleted_at IS NULL AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
        AND (${filter.tenantId ?? null}::uuid IS NULL OR tenant_id = ${filter.tenantId ?? null}::uuid)`;
    return rows.length > 0;
  }

  /**
   * The counted leads: the provider's time of the lead (its row's creation where none) in
   * [from, to), and a reply channel (Yelp, Thumbtack) or a first response (a Static Forms lead
   * counts once marked replied). A connection's target is its effective responseTarget, computed
   * here from the jsonb as effectiveSettings does: the connection's, else the tenant's, else 300 s.
   * The seconds within target count against all counted leads: an unanswered one is not within.
   * On `db`: the primary, or the read replica (ListReads).
   */
  async report(
    scope: TenantScope,
    filter: SpeedFilter,
    db: PrismaService = this.prisma,
  ): Promise<SpeedRow[]> {
    const scopeTenant = tenantParam(scope);
    const tenantId = filter.tenantId ?? null;
    const connectionId = filter.connectionId ?? null;
    const clientId = filter.clientId ?? null;
    const business = filter.clock === "business";
    const replying = [...API_PROVIDERS];
    // Without bucket=day there is no day to compute nor its grouping set to sort.
    const day = filter.byDay
      ? Prisma.sql`(COALESCE(l.provider_created_at, l.created_at) AT TIME ZONE 'UTC')::date`
      : Prisma.sql`NULL::date`;
    const byDay = filter.byDay ? Prisma.sql`, (counted.day)` : Prisma.empty;
    const dayOf = filter.byDay
      ? Prisma.sql`CASE WHEN GROUPING(counted.day) = 0 THEN counted.day END`
      : Prisma.sql`NULL::date`;
    const rows = await db.$queryRaw<(Omit<SpeedRow, "day"> & { day: Date | null })[]>`
      WITH scoped AS MATERIALIZED (
        SELECT t.id, t.defaults FROM tenants t
        WHERE (${scopeTenant}::uuid IS NULL OR t.id = ${scopeTenant}::uuid)
          AND (${tenantId}::uuid IS NULL OR t.id = ${tenantId}::uuid)
      ),
      -- Each tenant's window is one range of the index (an operator's report too: one per tenant).
      counted AS (
        SELECT l.connection_id, l.first_response_by AS by,
               CASE WHEN ${business} THEN l.first_response_business_seconds ELSE l.first_response_seconds END AS s,
               ${day} AS day
        FROM scoped CROSS JOIN LATERAL (
          SELECT * FROM leads l
          WHERE l.tenant_id = scoped.id
            AND COALESCE(l.provider_created_at, l.created_at) >= ${filter.from}
            AND COALESCE(l.provider_created_at, l.created_at) < ${filter.to}
        ) l
        WHERE (${connectionId}::uuid IS NULL OR l.connection_id = ${connectionId}::uuid)
          AND (${clientId}::uuid IS NULL OR l.connection_id IN (
                SELECT c.id FROM connections c WHERE c.client_id = ${clientId}::uuid AND c.tenant_id = scoped.id))
          AND (l.provider = ANY(${replying}::text[]) OR l.first_response_by IS NOT NULL)
      ),
      targets AS MATERIALIZED (
        SELECT c.id, ${Prisma.raw(responseTargetSql("c.settings", "cl.defaults", "scoped.defaults"))} AS target
        FROM connections c JOIN scoped ON scoped.id = c.tenant_id JOIN clients cl ON cl.id = c.client_id
        WHERE (${connectionId}::uuid IS NULL OR c.id = ${connectionId}::uuid)
          AND (${clientId}::uuid IS NULL OR c.client_id = ${clientId}::uuid)
      )
      SELECT CASE WHEN GROUPING(counted.connection_id) = 0 THEN counted.connection_id END AS "connectionId",
             ${dayOf} AS day,
             CASE WHEN GROUPING(targets.target) = 0 THEN targets.target END AS "targetSeconds",
             count(*)::int AS leads,
             count(counted.by)::int AS responded,
             count(*) FILTER (WHERE counted.s <= targets.target)::int AS "withinTarget",
             count(*) FILTER (WHERE counted.by = 'auto')::int AS auto,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY counted.s) AS "medianSeconds",
             percentile_cont(0.9) WITHIN GROUP (ORDER BY counted.s) AS "p90Seconds"
      FROM counted JOIN targets ON targets.id = counted.connection_id
      GROUP BY GROUPING SETS ((counted.connection_id, targets.target), ()${byDay})`;
    return rows.map((row) => ({ ...row, day: row.day && row.day.toISOString().slice(0, 10) }));
  }
}
