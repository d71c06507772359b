// The failures summary (GET /admin/jobs/summary): the jobs counted per operation, error and connection.
import { Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional, PickType } from "@nestjs/swagger";
import { IsIn } from "class-validator";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { Optional } from "../common/validation.js";
import { PrismaService } from "../database/prisma.service.js";
import { OPERATIONS } from "./operations.js";
import { JOB_STATUSES, type JobStatus } from "./state/job-states.js";
import { NullableId, NullableString } from "../common/api-properties.js";
import { JobsQuery } from "./job-reads.js";

/** The failures: what the summary counts when no `status` is given. */
const FAILED: JobStatus[] = ["dead", "blocked"];

/** The job list's filters (not its paging), with the failures as the default status. */
export class JobsSummaryQuery extends PickType(JobsQuery, [
  "operation",
  "connectionId",
  "tenantId",
  "from",
  "to",
] as const) {
  @ApiPropertyOptional({ enum: JOB_STATUSES, description: "default: dead and blocked" })
  @Optional()
  @IsIn(JOB_STATUSES)
  status?: JobStatus;
}

export class JobsSummaryGroup {
  @NullableId()
  connectionId!: string | null;

  @ApiProperty({ enum: OPERATIONS })
  operation!: string;

  @NullableString("the jobs' last error code; null for jobs without one")
  errorCode!: string | null;

  @ApiProperty()
  count!: number;

  @ApiProperty({ description: "the group's oldest job creation" })
  oldest!: Date;

  @ApiProperty({ description: "the group's newest job creation" })
  newest!: Date;
}

export class JobsSummary {
  @ApiProperty({ type: () => JobsSummaryGroup, isArray: true, description: "largest first" })
  groups!: JobsSummaryGroup[];
}

/** At most this many groups, the largest first: a screen's worth. */
const MAX_GROUPS = 200;

@Injectable()
export class JobsSummaryRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The groups, on `db`: the primary, or the read replica (ListReads). */
  async groups(
    scope: TenantScope,
    query: JobsSummaryQuery,
    db: PrismaService = this.prisma,
  ): Promise<JobsSummaryGroup[]> {
    const { rows } = await db.pool.query<JobsSummaryGroup & { count: string }>(
      `SELECT connection_id AS "connectionId", operation, last_error_code AS "errorCode",
              count(*) AS count, min(created_at) AS oldest, max(created_at) AS newest
       FROM jobs
       WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid) AND status = ANY($2::text[])
         AND ($3::text IS NULL OR operation = $3) AND ($4::uuid IS NULL OR connection_id = $4::uuid)
         AND ($5::timestamptz IS NULL OR created_at >= $5) AND ($6::timestamptz IS NULL OR created_at < $6)
       GROUP BY connection_id, operation, last_error_code
       ORDER BY count(*) DESC, max(created_at) DESC
       LIMIT ${MAX_GROUPS}`,
      [
        tenantParam(scope),
        query.status ? [query.status] : FAILED,
        query.operation ?? null,
        query.connectionId ?? null,
        query.from ?? null,
        query.to ?? null,
      ],
    );
    return rows.map((row) => ({ ...row, count: Number(row.count) }));
  }
}
