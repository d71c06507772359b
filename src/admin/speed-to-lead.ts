// GET /admin/speed-to-lead (api.md "First replies: templates, business hours, speed to lead"): how
// fast the window's leads got their first response, per connection and overall.
import { Controller, Get, Injectable, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from "@nestjs/swagger";
import { IsIn, IsUUID } from "class-validator";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { DateTimeField, Optional } from "../common/validation.js";
import { NullableNumber } from "../common/api-properties.js";
import { notFound } from "../common/id.pipe.js";
import { ListReads } from "../auth/list-reads.js";
import { type Clock, type SpeedRow, SpeedToLeadRepository } from "../leads/speed-to-lead.repository.js";

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
/** The longest window: a year's report stays one index range of a tenant's leads. */
const MAX_DAYS = 366;

export class SpeedToLeadQuery {
  @ApiPropertyOptional({
    format: "uuid",
    description: "only this connection (overall and series are its own)",
  })
  @Optional()
  @IsUUID()
  connectionId?: string;

  @ApiPropertyOptional({ format: "uuid", description: "operators: only this tenant's leads" })
  @Optional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({
    format: "uuid",
    description: "only this client's connections (another tenant's: 404)",
  })
  @Optional()
  @IsUUID()
  clientId?: string;

  @ApiPropertyOptional({ format: "date-time", description: "inclusive; default `to` minus 30 days" })
  @Optional()
  @DateTimeField("from")
  from?: Date;

  @ApiPropertyOptional({ format: "date-time", description: "exclusive; default now" })
  @Optional()
  @DateTimeField("to")
  to?: Date;

  @ApiPropertyOptional({ enum: ["wall", "business"], default: "wall" })
  @Optional()
  @IsIn(["wall", "business"])
  clock?: Clock;

  @ApiPropertyOptional({ enum: ["day"], description: "adds `series`, one entry per UTC day of the window" })
  @Optional()
  @IsIn(["day"])
  bucket?: "day";
}

export class SpeedFigures {
  @ApiProperty()
  leads!: number;

  @ApiProperty()
  responded!: number;

  @ApiProperty()
  unanswered!: number;

  @NullableNumber("null: no lead responded")
  medianSeconds!: number | null;

  @NullableNumber()
  p90Seconds!: number | null;

  @NullableNumber("of all counted leads, those answered within their connection's target (null: no leads)")
  withinTargetShare!: number | null;

  @NullableNumber("the connection's effective responseTarget; null overall (each lead has its connection's)")
  targetSeconds!: number | null;

  @NullableNumber("of the responded leads, those Leadgate answered (null: none responded)")
  autoShare!: number | null;
}

export class ConnectionSpeedFigures extends SpeedFigures {
  @ApiProperty({ format: "uuid" })
  connectionId!: string;
}

export class SpeedWindow {
  @ApiProperty()
  from!: Date;

  @ApiProperty()
  to!: Date;
}

/** One UTC day of `?bucket=day`: a day without leads has 0 and nulls. */
export class SpeedDay {
  @ApiProperty({ format: "date", example: "2026-11-30" })
  day!: string;

  @ApiProperty()
  leads!: number;

  @NullableNumber()
  medianSeconds!: number | null;

  @NullableNumber()
  p90Seconds!: number | null;
}

export class SpeedToLeadReport {
  @ApiProperty({ type: () => SpeedWindow })
  window!: SpeedWindow;

  @ApiProperty({ enum: ["wall", "business"] })
  clock!: Clock;

  @ApiProperty({ type: () => SpeedFigures })
  overall!: SpeedFigures;

  @ApiProperty({ type: () => ConnectionSpeedFigures, isArray: true })
  items!: ConnectionSpeedFigures[];

  @ApiPropertyOptional({ type: () => SpeedDay, isArray: true, description: "with `?bucket=day`" })
  series?: SpeedDay[];
}

const invalid = (field: string, message: string) =>
  new AppError(400, "validation_failed", `Invalid input: ${field}.`, { [field]: [message] });

function window(query: SpeedToLeadQuery): { from: Date; to: Date } {
  const to = query.to ?? new Date();
  const from = query.from ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
  if (from >= to) throw invalid("from", "from must be before to");
  if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS)
    throw invalid("to", `the window must not exceed ${MAX_DAYS} days`);
  return { from, to };
}

const share = (part: number, whole: number) => (whole === 0 ? null : part / whole);

function figures(row: SpeedRow): SpeedFigures {
  return {
    leads: row.leads,
    responded: row.responded,
    unanswered: row.leads - row.responded,
    medianSeconds: row.medianSeconds,
    p90Seconds: row.p90Seconds,
    withinTargetShare: share(row.withinTarget, row.leads),
    targetSeconds: row.targetSeconds,
    autoShare: share(row.auto, row.responded),
  };
}

/** Every UTC day the window touches, in order: a day without leads is there with 0 and nulls. */
function days(from: Date, to: Date): string[] {
  const out: string[] = [];
  for (let day = Math.floor(from.getTime() / DAY_MS) * DAY_MS; day < to.getTime(); day += DAY_MS)
    out.push(new Date(day).toISOString().slice(0, 10));
  return out;
}

@Injectable()
export class SpeedToLeadService {
  constructor(
    private readonly repository: SpeedToLeadRepository,
    private readonly reads: ListReads,
  ) {}

  async report(principal: Principal, query: SpeedToLeadQuery): Promise<SpeedToLeadReport> {
    const scope = scopeOf(principal);
    const { from, to } = window(query);
    const clock = query.clock ?? "wall";
    const filter = { ...query, from, to, clock, byDay: query.bucket === "day" };
    if (query.connectionId && !(await this.repository.hasConnection(scope, filter, query.connectionId)))
      throw notFound("connection");
    if (query.clientId && !(await this.repository.hasClient(scope, filter, query.clientId)))
      throw notFound("client");
    const rows = await this.reads.run(principal, (db) => this.repository.report(scope, filter, db));
    const overall = rows.find((row) => row.connectionId === null && row.day === null)!;
    const report: SpeedToLeadReport = {
      window: { from, to },
      clock,
      overall: figures(overall),
      items: rows
        .filter((row) => row.connectionId !== null)
        .map((row) => ({ connectionId: row.connectionId!, ...figures(row) }))
        .sort((x, y) => x.connectionId.localeCompare(y.connectionId)),
    };
    if (filter.byDay) {
      const byDay = new Map(rows.filter((row) => row.day !== null).map((row) => [row.day, row]));
      report.series = days(from, to).map((day) => {
        const row = byDay.get(day);
        return {
          day,
          leads: row?.leads ?? 0,
          medianSeconds: row?.medianSeconds ?? null,
          p90Seconds: row?.p90Seconds ?? null,
        };
      });
    }
    return report;
  }
}

@ApiTags("speed-to-lead")
@AdminApi()
@Controller("admin/speed-to-lead")
export class SpeedToLeadController {
  constructor(private readonly service: SpeedToLeadService) {}

  @ApiOperation({
    description:
      "The speed-to-lead report: per connection and overall, leads, responses, median and p90 seconds and the share within target, on the wall or the business-hours clock.",
  })
  @Get()
  @ApiOkResponse({
    description: "per connection and overall: leads, responded, median and p90 seconds, shares",
    type: SpeedToLeadReport,
  })
  report(
    @CurrentPrincipal() principal: Principal,
    @Query() query: SpeedToLeadQuery,
  ): Promise<SpeedToLeadReport> {
    return this.service.report(principal, query);
  }
}
