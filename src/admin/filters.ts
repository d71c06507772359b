import { ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsDate, IsOptional, IsUUID } from "class-validator";
import { ListQuery } from "./pagination.js";

/** `?from=&to=` (ISO 8601) on a list's time column, and `?connectionId=`. */
export class TimeRangeQuery extends ListQuery {
  @ApiPropertyOptional({ format: "uuid" })
  @IsOptional()
  @IsUUID()
  connectionId?: string;

  @ApiPropertyOptional({ format: "date-time", description: "inclusive lower bound" })
  @IsOptional()
  @Type(() => Date)
  @IsDate({ message: "from must be an ISO 8601 date-time" })
  from?: Date;

  @ApiPropertyOptional({ format: "date-time", description: "exclusive upper bound" })
  @IsOptional()
  @Type(() => Date)
  @IsDate({ message: "to must be an ISO 8601 date-time" })
  to?: Date;
}

export const timeRange = (query: { from?: Date; to?: Date }) =>
  query.from || query.to ? { gte: query.from, lt: query.to } : undefined;
