import { ApiPropertyOptional } from "@nestjs/swagger";
import { IsUUID } from "class-validator";
import { ListQuery } from "./pagination.js";
import { DateTimeField, Optional } from "../common/validation.js";

/** `?from=&to=` (ISO 8601) on a list's time column, and `?connectionId=`. */
export class TimeRangeQuery extends ListQuery {
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
