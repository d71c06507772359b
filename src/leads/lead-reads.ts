// What the admin API shows of leads: the list and detail queries (GET /admin/leads, /admin/leads/{id}),
// their filters and views, the first response as one field.
import { Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { IsIn, IsString, IsUUID, Length } from "class-validator";
import { TenantListQuery } from "../auth/list-filters.js";
import { type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import { PROVIDERS, type Provider } from "../providers/provider-event.js";
import { pageAfter } from "../common/pagination.js";
import { NullableDate, NullableString } from "../common/api-properties.js";
import { NoNul, Optional } from "../common/validation.js";

export class LeadsQuery extends TenantListQuery {
  @ApiPropertyOptional({ format: "uuid" })
  @Optional()
  @IsUUID()
  connectionId?: string;

  @ApiPropertyOptional({ format: "uuid", description: "only the leads of this client's connections" })
  @Optional()
  @IsUUID()
  clientId?: string;

  @ApiPropertyOptional({ enum: PROVIDERS })
  @Optional()
  @IsIn(PROVIDERS)
  provider?: Provider;

  @ApiPropertyOptional({
    description: "matches name, email, phone or the provider's lead id (case-insensitive)",
  })
  @Optional()
  @IsString()
  @Length(1, 200)
  @NoNul()
  q?: string;
}

const LEAD_VIEW = {
  id: true,
  tenantId: true,
  connectionId: true,
  provider: true,
  externalLeadId: true,
  status: true,
  name: true,
  email: true,
  phone: true,
  phoneConsent: true,
  details: true,
  lastEventAt: true,
  receivedAt: true,
  providerCreatedAt: true,
  firstResponseAt: true,
  firstResponseBy: true,
  firstResponseSeconds: true,
  firstResponseBusinessSeconds: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.LeadSelect;
type LeadRow = Prisma.LeadGetPayload<{ select: typeof LEAD_VIEW }>;

/** The first message to the customer (api.md "First replies ... speed to lead"). */
export class FirstResponseView {
  @ApiProperty()
  at!: Date;

  @ApiProperty({ enum: ["auto", "business"] })
  by!: "auto" | "business";

  @ApiProperty({ description: "from the lead's arrival" })
  seconds!: number;

  @ApiProperty({ description: "counting business hours only" })
  businessSeconds!: number;
}
type FirstResponseColumns =
  "firstResponseAt" | "firstResponseBy" | "firstResponseSeconds" | "firstResponseBusinessSeconds";

/** A lead as the admin API lists it (LEAD_VIEW's columns, its first response's as one field). */
export class LeadView implements Omit<LeadRow, FirstResponseColumns> {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @ApiProperty({ format: "uuid" })
  connectionId!: string;

  @ApiProperty({ enum: PROVIDERS })
  provider!: string;

  @ApiProperty()
  externalLeadId!: string;

  @ApiProperty()
  status!: string;

  @NullableString()
  name!: string | null;

  @NullableString()
  email!: string | null;

  @NullableString()
  phone!: string | null;

  @ApiProperty({ type: Boolean, nullable: true })
  phoneConsent!: boolean | null;

  @ApiProperty({ type: "object", additionalProperties: true, description: "the provider's other fields" })
  details!: Prisma.JsonValue;

  @ApiProperty()
  lastEventAt!: Date;

  @NullableDate()
  receivedAt!: Date | null;

  @NullableDate()
  providerCreatedAt!: Date | null;

  @ApiProperty()
  createdAt!: Date;

  @ApiProperty()
  updatedAt!: Date;

  @ApiProperty({ type: () => FirstResponseView, nullable: true, description: "null before one" })
  firstResponse!: FirstResponseView | null;
}

export class LeadMessageView {
  @ApiProperty()
  externalId!: string;

  @ApiProperty({ description: "inbound (from the customer) or outbound" })
  direction!: string;

  @NullableString()
  author!: string | null;

  @NullableString()
  text!: string | null;

  @NullableDate()
  sentAt!: Date | null;
}

/** GET /admin/leads/{id}: the lead with its messages, oldest first. */
export class LeadDetail extends LeadView {
  @ApiProperty({ type: () => LeadMessageView, isArray: true })
  messages!: LeadMessageView[];
}

/** A lead row as the API shows it: its first response's columns as one `firstResponse`. */
export function leadView<Row extends LeadRow>(row: Row): Omit<Row, FirstResponseColumns> & LeadView {
  const { firstResponseAt, firstResponseBy, firstResponseSeconds, firstResponseBusinessSeconds, ...lead } =
    row;
  const firstResponse =
    firstResponseAt && firstResponseBy
      ? {
          at: firstResponseAt,
          by: firstResponseBy as FirstResponseView["by"], // the column's CHECK allows only these
          seconds: firstResponseSeconds ?? 0,
          businessSeconds: firstResponseBusinessSeconds ?? firstResponseSeconds ?? 0,
        }
      : null;
  return { ...lead, firstResponse };
}

@Injectable()
export class LeadsAdminRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * The list, on `db`: the primary, or the read replica (ListReads). `q` is a case-insensitive
   * substring (ILIKE '%q%') of four columns: each arm of the OR is a scan of leads_search_trgm_idx
   * (pg_trgm) when q has a trigram (3 characters or more) and the tenant's newest-first index would
   * read more rows; a 1- or 2-character q reads the tenant's leads newest first until the page is full.
   */
  async list(scope: TenantScope, query: LeadsQuery, db: PrismaService = this.prisma): Promise<LeadView[]> {
    const page = pageAfter("createdAt", query);
    const q = query.q && { contains: query.q, mode: "insensitive" as const };
    // A client's leads are its connections' (at most MAX_CONNECTIONS_PER_TENANT ids).
    const ofClient = query.clientId
      ? (
          await db.connection.findMany({
            where: { ...tenantWhere(scope), clientId: query.clientId },
            select: { id: true },
          })
        ).map((connection) => connection.id)
      : undefined;
    const rows = await db.lead.findMany({
      where: {
        AND: [tenantWhere(scope), page.where],
        connectionId: ofClient ? { in: ofClient, equals: query.connectionId } : query.connectionId,
        provider: query.provider,
        OR: q ? [{ name: q }, { email: q }, { phone: q }, { externalLeadId: q }] : undefined,
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: LEAD_VIEW,
    });
    return rows.map(leadView);
  }

  async find(scope: TenantScope, id: string): Promise<LeadDetail | null> {
    const row = await this.prisma.lead.findFirst({
      where: { ...tenantWhere(scope), id },
      select: {
        ...LEAD_VIEW,
        messages: {
          where: tenantWhere(scope),
          select: { externalId: true, direction: true, author: true, text: true, sentAt: true },
          // The provider's list order where it has one (Yelp), else the time sent.
          orderBy: [{ position: { sort: "asc", nulls: "last" } }, { sentAt: "asc" }, { createdAt: "asc" }],
        },
      },
    });
    return row && leadView(row);
  }
}
