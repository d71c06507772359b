import { ApiPropertyOptional } from "@nestjs/swagger";
import { IsUUID } from "class-validator";
import { type Principal, scopeOf, type TenantScope } from "./principal.js";
import { ListQuery } from "../common/pagination.js";
import { DateTimeField, Optional } from "../common/validation.js";

/** `?tenantId=` of the list and report routes (api.md "Console and users"): operators narrow to one tenant. */
export class TenantListQuery extends ListQuery {
  @ApiPropertyOptional({ format: "uuid", description: "operators: only this tenant's rows" })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

/** A scope that matches no row: a tenant-admin asking for another tenant sees an empty list. */
const NO_TENANT = "00000000-0000-0000-0000-000000000000";

/**
 * The scope of a list narrowed by `?tenantId`: an operator's becomes that tenant; a tenant's stays its
 * own when the id is its own, and matches nothing otherwise (never another tenant's rows).
 */
export function listScope(principal: Principal, tenantId: string | undefined): TenantScope {
  const scope = scopeOf(principal);
  if (tenantId === undefined) return scope;
  if (typeof scope !== "string") return tenantId;
  return scope === tenantId ? scope : NO_TENANT;
}

/** `?from=&to=` (ISO 8601) on a list's time column, and `?connectionId=`. */
export class TimeRangeQuery extends TenantListQuery {
  @ApiPropertyOptional({ format: "uuid" })
  @Optional()
  @IsUUID()
  connectionId?: string;

  @ApiPropertyOptional({ format: "date-time", description: "inclusive lower bound" })
  @Optional()
  @DateTimeField("from")
  from?: Date;

  @ApiPropertyOptional({ format: "date-time", description: "exclusive upper bound" })
  @Optional()
  @DateTimeField("to")
  to?: Date;
}

export const timeRange = (query: { from?: Date; to?: Date }) =>
  query.from || query.to ? { gte: query.from, lt: query.to } : undefined;
