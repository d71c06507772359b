// Tenants (agencies). Operators create and list them; a tenant-admin key sees its own tenant.
import { Body, Controller, Get, HttpCode, Injectable, Param, Post, Query } from "@nestjs/common";
import { ApiCreatedResponse, ApiOkResponse, ApiProperty, ApiTags } from "@nestjs/swagger";
import { IsString, Length } from "class-validator";
import { AdminApi, OperatorOnly } from "../auth/api-key.guard.js";
import { ApiKeysRepository, type CreatedApiKey } from "../auth/api-keys.repository.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { PLATFORM, type Principal, scopeOf, type TenantScope } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions } from "../database/transactions.js";
import type { Prisma } from "../generated/prisma/client.js";
import { AuditRepository } from "./audit.js";
import { IdPipe, notFound } from "./id.pipe.js";
import { ListQuery, type Page, pageAfter, toPage } from "./pagination.js";

export class CreateTenantBody {
  @ApiProperty({ example: "Acme Roofing Agency" })
  @IsString()
  @Length(1, 200)
  name!: string;
}

const VIEW = { id: true, name: true, createdAt: true } satisfies Prisma.TenantSelect;
type TenantView = Prisma.TenantGetPayload<{ select: typeof VIEW }>;

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
  @ApiCreatedResponse({ description: "the tenant and its first tenant-admin key (shown once)" })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateTenantBody,
  ): Promise<{ tenant: TenantView; apiKey: CreatedApiKey }> {
    return this.tenants.create(principal, body.name);
  }

  @Get()
  @ApiOkResponse({ description: "tenants, newest first (a tenant-admin key: its own)" })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListQuery): Promise<Page<TenantView>> {
    const rows = await this.tenants.list(scopeOf(principal), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }

  @Get(":id")
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<TenantView> {
    return (await this.tenants.find(scopeOf(principal), id)) ?? Promise.reject(notFound("tenant"));
  }
}
