// A tenant's overview (GET /admin/overview): five counts of the last day and its connections, in one
// round trip, for the console's first screen.
import { Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { IsUUID } from "class-validator";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { Optional } from "../common/validation.js";
import { PrismaService } from "../database/prisma.service.js";

export class OverviewQuery {
  @ApiPropertyOptional({ format: "uuid", description: "operators: only this tenant" })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

export class ConnectionCounts {
  @ApiProperty({ description: "connections not disabled" })
  total!: number;

  @ApiProperty({
    description: "paused, a credential error, a grant to renew, or a failing registration or reconciliation",
  })
  attention!: number;
}

export class Overview {
  @ApiProperty()
  leads24h!: number;

  @ApiProperty()
  receipts24h!: number;

  @ApiProperty({ description: "jobs that went dead or blocked in the last 24 h (their last change)" })
  failed24h!: number;

  @ApiProperty()
  openAlerts!: number;

  @ApiProperty({ type: () => ConnectionCounts })
  connections!: ConnectionCounts;
}

const DAY_MS = 86_400_000;

@Injectable()
export class OverviewRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Five counts in one round trip, each filtered by the scope's tenant; on `db`: the primary, or the read replica (ListReads). */
  async figures(scope: TenantScope, now: Date, db: PrismaService = this.prisma): Promise<Overview> {
    const since = new Date(now.getTime() - DAY_MS);
    const { rows } = await db.pool.query<Record<string, string>>(
      `SELECT
         (SELECT count(*) FROM leads WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
            AND created_at >= $2) AS leads,
         (SELECT count(*) FROM receipts WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
            AND received_at >= $2) AS receipts,
         (SELECT count(*) FROM jobs WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
            AND status IN ('dead', 'blocked') AND updated_at >= $2) AS failed,
         (SELECT count(*) FROM alerts WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
            AND status = 'open') AS alerts,
         (SELECT count(*) FROM connections WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
            AND status <> 'disabled') AS total,
         (SELECT count(*) FROM connections WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
            AND status <> 'disabled'
            AND (status IN ('paused', 'credential_error') OR oauth_status = 'reauthorization_required'
              OR registration_status = 'error' OR reconcile_status = 'error')) AS attention`,
      [tenantParam(scope), since],
    );
    const row = rows[0]!;
    return {
      leads24h: Number(row.leads),
      receipts24h: Number(row.receipts),
      failed24h: Number(row.failed),
      openAlerts: Number(row.alerts),
      connections: { total: Number(row.total), attention: Number(row.attention) },
    };
  }
}
