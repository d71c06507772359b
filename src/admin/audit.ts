// The audit log: who (which API key or console user) did which admin action, on what, when. Written
// in the same transaction as the action it records.
import { Controller, Get, Injectable, Query } from "@nestjs/common";
import { ApiOkResponse, ApiProperty, ApiTags } from "@nestjs/swagger";
import { NullableId } from "../common/api-properties.js";
import { listScope, TenantListQuery } from "./filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { Prisma } from "../generated/prisma/client.js";
import { type Page, PageOf, pageAfter, toPage } from "./pagination.js";

export type AuditAction =
  | "tenant.create"
  | "tenant.update"
  | "api-key.create"
  | "api-key.revoke"
  | "connection.create"
  | "connection.update"
  | "connection.pause"
  | "connection.resume"
  | "connection.rotate-secret"
  | "connection.rotate-crm-secret"
  | "connection.revoke-previous-secret"
  | "connection.disable"
  | "connection.oauth-connect"
  | "connection.reconnect"
  | "connection.sync"
  | "connection.backfill"
  | "lead.mark_replied"
  | "job.replay"
  | "receipt.replay"
  | "replay.create"
  | "alert.acknowledge"
  | "alert.resolve"
  | "notification-channel.create"
  | "notification-channel.delete"
  | "user.create"
  | "user.invite"
  | "user.disable";

export interface AuditRecord {
  action: AuditAction;
  /** The tenant the action touched; null for platform actions. */
  tenantId: string | null;
  targetType: string;
  targetId: string | null;
  /** What changed, never a secret. */
  details?: Prisma.InputJsonObject;
}

const VIEW = {
  id: true,
  tenantId: true,
  apiKeyId: true,
  userId: true,
  action: true,
  targetType: true,
  targetId: true,
  details: true,
  createdAt: true,
} satisfies Prisma.AuditEntrySelect;

/** One admin action: what, on what, by which API key or user, when. */
export class AuditEntryView implements Prisma.AuditEntryGetPayload<{ select: typeof VIEW }> {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @NullableId("null for platform actions")
  tenantId!: string | null;

  @NullableId("the API key that acted (null: a user)")
  apiKeyId!: string | null;

  @NullableId("the user that acted (null: an API key)")
  userId!: string | null;

  @ApiProperty({ example: "connection.pause" })
  action!: string;

  @ApiProperty({ example: "connection" })
  targetType!: string;

  @NullableId()
  targetId!: string | null;

  @ApiProperty({ type: "object", additionalProperties: true, description: "what changed, never a secret" })
  details!: Prisma.JsonValue;

  @ApiProperty()
  createdAt!: Date;
}

@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** `by`: the key or user that acted (an OAuth callback acts for whoever started the flow). */
  async record(db: Tx, by: Pick<Principal, "keyId" | "userId">, ...entries: AuditRecord[]): Promise<void> {
    await db.auditEntry.createMany({
      data: entries.map((entry) => ({
        ...entry,
        apiKeyId: by.keyId,
        userId: by.userId,
        details: entry.details ?? {},
      })),
    });
  }

  list(scope: TenantScope, page: { take: number; where: Prisma.AuditEntryWhereInput }) {
    return this.prisma.auditEntry.findMany({
      where: { ...tenantWhere(scope), ...page.where },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: VIEW,
    });
  }
}

@ApiTags("audit")
@AdminApi()
@Controller("admin/audit")
export class AuditController {
  constructor(private readonly audit: AuditRepository) {}

  @Get()
  @ApiOkResponse({
    description: "admin actions, newest first: action, target, the API key or user that did it",
    type: PageOf(AuditEntryView),
  })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: TenantListQuery,
  ): Promise<Page<AuditEntryView>> {
    const rows = await this.audit.list(listScope(principal, query.tenantId), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }
}
