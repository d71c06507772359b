// GET /admin/audit: the audit log (src/audit/), newest first.
import { Controller, Get, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from "@nestjs/swagger";
import { AuditRepository, type AUDIT_VIEW } from "../audit/audit.repository.js";
import { NullableId } from "../common/api-properties.js";
import { listScope, TenantListQuery } from "../auth/list-filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import type { Principal } from "../auth/principal.js";
import type { Prisma } from "../generated/prisma/client.js";
import { type Page, PageOf, pageAfter, toPage } from "../common/pagination.js";

/** One admin action: what, on what, by which API key or user, when. */
export class AuditEntryView implements Prisma.AuditEntryGetPayload<{ select: typeof AUDIT_VIEW }> {
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

@ApiTags("audit")
@AdminApi()
@Controller("admin/audit")
export class AuditController {
  constructor(private readonly audit: AuditRepository) {}

  @ApiOperation({ description: "The audit log, newest first: who did what admin action when." })
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
