// Tenants (agencies). Operators create and list them; a tenant-admin key sees and updates its own
// tenant: its name and its `defaults`, the reply settings its connections inherit (api.md "First replies").
import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from "@nestjs/common";
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsObject, IsString, Length, ValidateNested } from "class-validator";
import { AdminApi, OperatorOnly } from "../auth/api-key.guard.js";
import type { CreatedApiKey } from "../auth/api-keys.repository.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { Optional } from "../common/validation.js";
import type { Prisma } from "../generated/prisma/client.js";
import { TenantsRepository } from "../tenants/tenants.repository.js";
import { ReplySettingsBody } from "../connections/connections.dto.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { ListQuery, type Page, PageOf, pageAfter, toPage } from "../common/pagination.js";

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

@ApiTags("tenants")
@AdminApi()
@Controller("admin/tenants")
export class TenantsController {
  constructor(private readonly tenants: TenantsRepository) {}

  @ApiOperation({
    description: "Creates a tenant (an agency) with its first tenant-admin key, shown once (operators only).",
  })
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

  @ApiOperation({ description: "Lists the tenants, newest first; a tenant-admin sees its own tenant only." })
  @Get()
  @ApiOkResponse({
    description: "tenants, newest first (a tenant-admin key: its own)",
    type: PageOf(TenantView),
  })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListQuery): Promise<Page<TenantView>> {
    const rows = await this.tenants.list(scopeOf(principal), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }

  @ApiOperation({
    description:
      "Updates a tenant's name and `defaults`, the reply settings every connection of the tenant inherits unless it sets its own.",
  })
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

  @ApiOperation({
    description: "Reads one tenant with its `defaults`; a tenant-admin reads its own tenant only.",
  })
  @Get(":id")
  @ApiOkResponse({ type: TenantView })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<TenantView> {
    return (await this.tenants.find(scopeOf(principal), id)) ?? Promise.reject(notFound("tenant"));
  }
}
