// API keys: operators create keys of either role; a tenant-admin creates and revokes its own
// tenant's tenant-admin keys. The key itself is shown once, at creation.
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from "@nestjs/common";
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from "@nestjs/swagger";
import { IsIn, IsString, IsUUID, Length } from "class-validator";
import { listScope, TenantListQuery } from "../auth/list-filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { ROLES, type Role } from "../auth/api-key.js";
import { ApiKeysRepository, ApiKeyView, type CreatedApiKey } from "../auth/api-keys.repository.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { Transactions } from "../database/transactions.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { type Page, PageOf, pageAfter, toPage } from "../common/pagination.js";
import { ownTenant, TenantsRepository } from "../tenants/tenants.repository.js";
import { Optional } from "../common/validation.js";
import { CreatedApiKeyView } from "./tenants.js";

export class CreateApiKeyBody {
  @ApiProperty({ example: "zapier export" })
  @IsString()
  @Length(1, 200)
  name!: string;

  @ApiProperty({ enum: ROLES })
  @IsIn(ROLES)
  role!: Role;

  @ApiPropertyOptional({ description: "required for a tenant-admin key created by an operator" })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

@ApiTags("api-keys")
@AdminApi()
@Controller("admin/api-keys")
export class ApiKeysController {
  constructor(
    private readonly transactions: Transactions,
    private readonly keys: ApiKeysRepository,
    private readonly tenants: TenantsRepository,
    private readonly audit: AuditRepository,
  ) {}

  @ApiOperation({
    description:
      "Creates an API key (operators: either role; a tenant-admin: its own tenant's tenant-admin keys); the key is shown once.",
  })
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ description: "`{ id, key }`: the key is shown this once", type: CreatedApiKeyView })
  @ApiUnprocessableEntityResponse({
    description: "`limit_reached`: the tenant has MAX_API_KEYS_PER_TENANT active keys; nothing written",
  })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateApiKeyBody,
  ): Promise<CreatedApiKey> {
    const tenantId = await this.tenantOfNewKey(principal, body);
    return this.transactions.run(async (tx) => {
      const created = await this.keys.create(tx, { tenantId, name: body.name, role: body.role }, principal);
      await this.audit.record(tx, principal, {
        action: "api-key.create",
        tenantId,
        targetType: "api-key",
        targetId: created.id,
        details: { name: body.name, role: body.role },
      });
      return created;
    });
  }

  @ApiOperation({
    description: "Lists the API keys of the caller's scope, newest first, without the keys themselves.",
  })
  @Get()
  @ApiOkResponse({ type: PageOf(ApiKeyView) })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: TenantListQuery,
  ): Promise<Page<ApiKeyView>> {
    const rows = await this.keys.list(listScope(principal, query.tenantId), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }

  @ApiOperation({ description: "Revokes an API key: it stops working at once." })
  @Delete(":id")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "revoked; the key stops working at once" })
  async revoke(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const key = await this.keys.revoke(tx, scopeOf(principal), id);
      if (!key) throw notFound("API key");
      await this.audit.record(tx, principal, {
        action: "api-key.revoke",
        tenantId: key.tenantId,
        targetType: "api-key",
        targetId: id,
      });
    });
  }

  /** Who a new key belongs to, by the caller's role (api.md). */
  private async tenantOfNewKey(principal: Principal, body: CreateApiKeyBody): Promise<string | null> {
    if (principal.role !== "operator") {
      if (body.role === "operator")
        throw new AppError(403, "forbidden", "Only operators create operator keys.");
      return ownTenant(principal, body.tenantId);
    }
    if (body.role === "operator") {
      if (body.tenantId !== undefined) throw invalidTenant("an operator key belongs to no tenant");
      return null;
    }
    if (body.tenantId === undefined) throw invalidTenant("required for a tenant-admin key");
    if (!(await this.tenants.find(scopeOf(principal), body.tenantId))) throw notFound("tenant");
    return body.tenantId;
  }
}

const invalidTenant = (problem: string) =>
  new AppError(400, "validation_failed", `Invalid input: tenantId.`, { tenantId: [problem] });
