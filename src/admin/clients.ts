// Clients: the businesses a tenant (an agency) serves (api.md "Clients"). Each has the reply
// settings its connections inherit before the tenant's (`defaults`), its `branding` and the
// `timezone` of its reports. Operators name the tenant of a new client; a tenant-admin works in its own.
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from "@nestjs/common";
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from "@nestjs/swagger";
import { Type } from "class-transformer";
import {
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Matches,
  ValidateNested,
} from "class-validator";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { listScope } from "../auth/list-filters.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { type ClientRow, ClientsRepository } from "../clients/clients.repository.js";
import { IdPipe } from "../common/id.pipe.js";
import { ListQuery, type Page, PageOf, pageAfter, toPage } from "../common/pagination.js";
import { NoNul, Optional } from "../common/validation.js";
import { CONFIG, type ConnectionsConfig } from "../config/sections.js";
import { ReplySettingsBody } from "../connections/connections.dto.js";
import type { Prisma } from "../generated/prisma/client.js";
import { TenantsRepository } from "../tenants/tenants.repository.js";

/** `branding` as given: each field replaces the stored one, null removes it (PATCH). */
export class BrandingBody {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: "Acme Roofing",
    description: "shown in place of Leadgate's name",
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @NoNul()
  displayName?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "https only; referenced, never fetched by Leadgate",
  })
  @IsOptional()
  @IsUrl(
    { protocols: ["https"], require_protocol: true, require_tld: false },
    { message: "logoUrl must be an https:// URL" },
  )
  @Length(1, 2048)
  logoUrl?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, example: "#1a73e8" })
  @IsOptional()
  @Matches(/^#[0-9a-fA-F]{6}$/, { message: "accentColor must be a color like #1a73e8" })
  accentColor?: string | null;
}

export class CreateClientBody {
  @ApiProperty({ example: "Acme Roofing" })
  @IsString()
  @Length(1, 200)
  @NoNul()
  name!: string;

  @ApiPropertyOptional({
    format: "uuid",
    description: "required for operator keys; a tenant-admin key creates in its own tenant",
  })
  @Optional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({
    type: ReplySettingsBody,
    description: "the reply settings its connections inherit before the tenant's",
  })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => ReplySettingsBody)
  defaults?: ReplySettingsBody;

  @ApiPropertyOptional({ type: BrandingBody })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => BrandingBody)
  branding?: BrandingBody;

  @ApiPropertyOptional({
    example: "America/New_York",
    description:
      "IANA zone of its reports and share pages (default: the zone of the tenant's default business hours, else UTC)",
  })
  @Optional()
  @IsString()
  @Length(1, 64)
  timezone?: string;
}

export class UpdateClientBody {
  @ApiPropertyOptional({ example: "Acme Roofing" })
  @Optional()
  @IsString()
  @Length(1, 200)
  @NoNul()
  name?: string;

  @ApiPropertyOptional({
    type: ReplySettingsBody,
    description:
      "each given field replaces the stored one; null removes it (its connections inherit the tenant's)",
  })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => ReplySettingsBody)
  defaults?: ReplySettingsBody;

  @ApiPropertyOptional({
    type: BrandingBody,
    description: "each given field replaces the stored one; null removes it",
  })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => BrandingBody)
  branding?: BrandingBody;

  @ApiPropertyOptional({ example: "America/New_York" })
  @Optional()
  @IsString()
  @Length(1, 64)
  timezone?: string;
}

export class ClientsQuery extends ListQuery {
  @ApiPropertyOptional({ format: "uuid", description: "operators: only this tenant's clients" })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

/** A client as the admin API shows it. */
export class ClientView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({
    type: () => ReplySettingsBody,
    description: "the reply settings its connections inherit before the tenant's",
  })
  defaults!: Prisma.JsonValue;

  @ApiProperty({ type: () => BrandingBody })
  branding!: Prisma.JsonValue;

  @ApiProperty({ example: "America/New_York" })
  timezone!: string;

  @ApiProperty()
  createdAt!: Date;

  @ApiProperty()
  updatedAt!: Date;
}

export class ClientAnswer {
  @ApiProperty({ type: () => ClientView })
  client!: ClientView;
}

@ApiTags("clients")
@AdminApi()
@Controller("admin/clients")
export class ClientsController {
  constructor(
    private readonly clients: ClientsRepository,
    private readonly tenants: TenantsRepository,
    @Inject(CONFIG.connections) private readonly limits: ConnectionsConfig,
  ) {}

  @Post()
  @ApiOperation({
    description:
      "Creates a client of a tenant (an operator names the tenant; a tenant-admin creates in its own).",
  })
  @HttpCode(201)
  @ApiCreatedResponse({ type: ClientAnswer })
  @ApiUnprocessableEntityResponse({ description: "`limit_reached`: MAX_CLIENTS_PER_TENANT live clients" })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateClientBody,
  ): Promise<ClientAnswer> {
    const { tenantId: named, ...fields } = body;
    const tenantId = await this.tenants.tenantOfNew(principal, named, "creates a client");
    return {
      client: await this.clients.create(principal, tenantId, fields, this.limits.maxClientsPerTenant),
    };
  }

  @Get()
  @ApiOperation({
    description: "Lists the clients the key may see, newest first; `?tenantId` narrows an operator's list.",
  })
  @ApiOkResponse({
    description: "clients, newest first (a tenant-admin key: its own tenant's)",
    type: PageOf(ClientView),
  })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ClientsQuery,
  ): Promise<Page<ClientRow>> {
    const rows = await this.clients.list(listScope(principal, query.tenantId), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }

  @Get(":id")
  @ApiOperation({ description: "One client with its defaults, branding and time zone." })
  @ApiOkResponse({ type: ClientView })
  get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<ClientRow> {
    return this.clients.find(scopeOf(principal), id);
  }

  @Patch(":id")
  @ApiOperation({
    description:
      "Renames a client or changes its defaults, branding or time zone (each given field replaces the stored one; null removes it).",
  })
  @ApiOkResponse({ type: ClientAnswer })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: UpdateClientBody,
  ): Promise<ClientAnswer> {
    return { client: await this.clients.update(principal, scopeOf(principal), id, body) };
  }

  @Delete(":id")
  @ApiOperation({
    description: "Deletes a client that has no live connection and is not its tenant's only client.",
  })
  @HttpCode(204)
  @ApiNoContentResponse({ description: "deleted (its disabled connections keep their history)" })
  @ApiConflictResponse({
    description:
      "`client_in_use`: it has connections that are not disabled, or it is the tenant's only client",
  })
  async remove(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<void> {
    await this.clients.remove(principal, scopeOf(principal), id);
  }
}
