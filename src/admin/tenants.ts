// Tenants (agencies). Operators create and list them; a tenant-admin key sees and updates its own
// tenant: its name and its `defaults`, the reply settings its connections inherit (api.md "First replies").
import { Body, Controller, Get, HttpCode, Injectable, Param, Patch, Post, Query } from "@nestjs/common";
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsObject, IsString, Length, ValidateNested } from "class-validator";
import { AdminApi, OperatorOnly } from "../auth/api-key.guard.js";
import { ApiKeysRepository, type CreatedApiKey } from "../auth/api-keys.repository.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { PLATFORM, type Principal, scopeOf, type TenantScope } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions } from "../database/transactions.js";
import { given, Optional } from "../common/validation.js";
import { settingsWithoutNulls } from "../connections/lifecycle/connection.js";
import type { Tx } from "../database/transactions.js";
import type { Prisma } from "../generated/prisma/client.js";
import { effectiveSettings, type ReplySettings } from "../replies/reply-settings.js";
import { AuditRepository } from "./audit.js";
import { ReplySettingsBody } from "./connections/connections.dto.js";
import {
  delayField,
  delayProblem,
  type FieldErrors,
  refuse,
  replySettingsErrors,
  storedSizeErrors,
} from "./reply-settings-check.js";
import { IdPipe, notFound } from "./id.pipe.js";
import { ListQuery, type Page, PageOf, pageAfter, toPage } from "./pagination.js";

export class CreateTenantBody {
  @ApiProperty({ example: "Acme Roofing Agency" })
  @IsString()
  @Length(1, 200)
  name!: string;
}

export class UpdateTenantBody {
  @ApiPropertyOptional({ example: "Acme Roofing Agency" })
  @Optional()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({
    type: ReplySettingsBody,
    description:
      "each given field replaces the stored one; null removes it (connections inherit the built-in default)",
  })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => ReplySettingsBody)
  defaults?: ReplySettingsBody;
}

const VIEW = { id: true, name: true, defaults: true, createdAt: true } satisfies Prisma.TenantSelect;

/** A tenant as the admin API shows it. */
export class TenantView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ type: () => ReplySettingsBody, description: "the reply settings its connections inherit" })
  defaults!: Prisma.JsonValue;

  @ApiProperty()
  createdAt!: Date;
}

export class CreatedApiKeyView implements CreatedApiKey {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ description: "the key, shown this once" })
  key!: string;
}

export class CreatedTenant {
  @ApiProperty({ type: () => TenantView })
  tenant!: TenantView;

  @ApiProperty({ type: () => CreatedApiKeyView, description: "its first tenant-admin key" })
  apiKey!: CreatedApiKeyView;
}

export class TenantAnswer {
  @ApiProperty({ type: () => TenantView })
  tenant!: TenantView;
}

/**
 * The tenant a tenant-admin acts on: its own. Naming another tenant's id answers `404`, as every
 * other tenant's id does for it.
 */
export function ownTenant(principal: Principal, tenantId: string | undefined): string {
  if (tenantId !== undefined && tenantId !== principal.tenantId) throw notFound("tenant");
  return principal.tenantId!;
}

/** A tenant's own id is its scope: tenant-admins see exactly one tenant. */
const tenantIdWhere = (scope: TenantScope) => (scope === PLATFORM ? {} : { id: scope });

@Injectable()
export class TenantsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly keys: ApiKeysRepository,
    private readonly audit: AuditRepository,
  ) {}

  /** The tenant, its first tenant-admin key and the audit row, in one transaction. */
  create(by: Principal, name: string): Promise<{ tenant: TenantView; apiKey: CreatedApiKey }> {
    return this.transactions.run(async (tx) => {
      const tenant = await tx.tenant.create({ data: { name }, select: VIEW });
      const apiKey = await this.keys.create(tx, {
        tenantId: tenant.id,
        name: "first admin key",
        role: "tenant-admin",
      });
      await this.audit.record(tx, by, {
        action: "tenant.create",
        tenantId: tenant.id,
        targetType: "tenant",
        targetId: tenant.id,
        details: { name, apiKeyId: apiKey.id },
      });
      return { tenant, apiKey };
    });
  }

  list(scope: TenantScope, page: { take: number; where: Prisma.TenantWhereInput }) {
    return this.prisma.tenant.findMany({
      where: { AND: [tenantIdWhere(scope), page.where] },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: VIEW,
    });
  }

  /**
   * Name and defaults, with the audit row, in one transaction. Refused (400, nothing written) when a
   * template or the hours do not parse, or when the new defaults would put a connection's effective
   * delaySeconds at or above its effective responseTarget (the connections are named).
   */
  async update(by: Principal, scope: TenantScope, id: string, body: UpdateTenantBody) {
    const named = given(body.defaults ?? {});
    refuse(replySettingsErrors(named, "defaults"));
    if (scope !== PLATFORM && scope !== id) throw notFound("tenant");
    return this.transactions.run(async (tx) => {
      // Locked: a connection's PATCH reads the defaults FOR SHARE, so its delay check and this
      // one see each other's change (defaultsOf).
      const [locked] = await tx.$queryRaw<{ defaults: ReplySettings }[]>`
        SELECT defaults FROM tenants WHERE id = ${id}::uuid FOR UPDATE`;
      if (!locked) throw notFound("tenant");
      const defaults: ReplySettings = settingsWithoutNulls({ ...locked.defaults, ...named });
      refuse(storedSizeErrors(defaults, "defaults"));
      if ("autoResponse" in named || "responseTarget" in named) {
        refuse(await this.delayConflicts(tx, id, defaults, named));
      }
      const tenant = await tx.tenant.update({
        where: { id },
        data: { name: body.name, defaults: defaults as Prisma.InputJsonObject },
        select: VIEW,
      });
      await this.audit.record(tx, by, {
        action: "tenant.update",
        tenantId: id,
        targetType: "tenant",
        targetId: id,
        details: {
          fields: Object.keys(given(body)).concat(Object.keys(named).map((key) => `defaults.${key}`)),
        },
      });
      return { tenant };
    });
  }

  /** The defaults' own delay against their target, then every live connection that inherits either. */
  private async delayConflicts(
    tx: Tx,
    tenantId: string,
    defaults: ReplySettings,
    named: object,
  ): Promise<FieldErrors> {
    const problems: string[] = [];
    const own = delayProblem(effectiveSettings({}, defaults));
    if (own) problems.push(`the defaults themselves: ${own}`);
    const connections = await tx.connection.findMany({
      where: { tenantId, status: { not: "disabled" } },
      select: { id: true, displayName: true, settings: true },
      orderBy: { createdAt: "asc" },
    });
    for (const connection of connections) {
      const effective = effectiveSettings(connection.settings as ReplySettings, defaults);
      const inherits =
        effective.source.autoResponse !== "connection" || effective.source.responseTarget !== "connection";
      const problem = inherits ? delayProblem(effective) : undefined;
      if (problem) problems.push(`connection ${connection.id} (${connection.displayName}): ${problem}`);
    }
    return problems.length > 0 ? { [delayField(named, "defaults")]: problems } : {};
  }

  /**
   * The tenant's defaults (what its connections inherit). `share`: locked against a concurrent
   * tenant PATCH until the transaction ends, so a connection's delay check sees the defaults that
   * stay in force.
   */
  async defaultsOf(db: Tx | PrismaService, tenantId: string, lock?: "share"): Promise<ReplySettings> {
    const rows = lock
      ? await db.$queryRaw<{ defaults: ReplySettings }[]>`
          SELECT defaults FROM tenants WHERE id = ${tenantId}::uuid FOR SHARE`
      : await db.tenant.findMany({ where: { id: tenantId }, select: { defaults: true } });
    return (rows[0]?.defaults ?? {}) as ReplySettings;
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.tenant.findFirst({ where: { AND: [tenantIdWhere(scope), { id }] }, select: VIEW });
  }
}

@ApiTags("tenants")
@AdminApi()
@Controller("admin/tenants")
export class TenantsController {
  constructor(private readonly tenants: TenantsRepository) {}

  @Post()
  @OperatorOnly()
  @HttpCode(201)
  @ApiCreatedResponse({
    description: "the tenant and its first tenant-admin key (shown once)",
    type: CreatedTenant,
  })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateTenantBody,
  ): Promise<CreatedTenant> {
    return this.tenants.create(principal, body.name);
  }

  @Get()
  @ApiOkResponse({
    description: "tenants, newest first (a tenant-admin key: its own)",
    type: PageOf(TenantView),
  })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListQuery): Promise<Page<TenantView>> {
    const rows = await this.tenants.list(scopeOf(principal), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }

  @Patch(":id")
  @ApiOkResponse({
    description: "`{ tenant }` with its `defaults` (a tenant-admin key: its own tenant)",
    type: TenantAnswer,
  })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: UpdateTenantBody,
  ): Promise<TenantAnswer> {
    return this.tenants.update(principal, scopeOf(principal), id, body);
  }

  @Get(":id")
  @ApiOkResponse({ type: TenantView })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<TenantView> {
    return (await this.tenants.find(scopeOf(principal), id)) ?? Promise.reject(notFound("tenant"));
  }
}
