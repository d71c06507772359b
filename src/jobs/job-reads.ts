// What the admin API shows of jobs: the list and detail queries over the jobs and their attempts
// (GET /admin/jobs, /admin/jobs/{id}), their views, and the list filters; replay answers with them too.
import { Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { IsIn, IsUUID, Matches } from "class-validator";
import { type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import { type Operation, OPERATIONS } from "./operations.js";
import { JOB_STATUSES, type JobStatus, WAITING_FOR } from "./state/job-states.js";
import { NullableDate, NullableId, NullableNumber, NullableString } from "../common/api-properties.js";
import { TimeRangeQuery, timeRange } from "../auth/list-filters.js";
import { pageAfter } from "../common/pagination.js";
import { Optional } from "../common/validation.js";

/** What an error code looks like (`http_400`, `timeout`, `destination_forbidden`). */
const ERROR_CODE = /^[a-z0-9_.:-]{1,64}$/;

export class JobsQuery extends TimeRangeQuery {
  @ApiPropertyOptional({ enum: JOB_STATUSES })
  @Optional()
  @IsIn(JOB_STATUSES)
  status?: JobStatus;

  @ApiPropertyOptional({ enum: OPERATIONS })
  @Optional()
  @IsIn(OPERATIONS)
  operation?: Operation;

  @ApiPropertyOptional({ format: "uuid" })
  @Optional()
  @IsUUID()
  receiptId?: string;

  @ApiPropertyOptional({
    description:
      "the job's last error code (`lastErrorCode`, e.g. `http_400`): one group of GET /admin/jobs/summary",
    pattern: ERROR_CODE.source,
  })
  @Optional()
  @Matches(ERROR_CODE)
  errorCode?: string;
}

export const JOB_VIEW = {
  id: true,
  tenantId: true,
  connectionId: true,
  receiptId: true,
  operation: true,
  jobKey: true,
  status: true,
  waitingFor: true,
  attempts: true,
  maxAttempts: true,
  nextAttemptAt: true,
  lastErrorCode: true,
  lastErrorAt: true,
  completedAt: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.JobSelect;

const ATTEMPT_VIEW = {
  number: true,
  startedAt: true,
  finishedAt: true,
  outcome: true,
  errorCode: true,
  durationMs: true,
} satisfies Prisma.JobAttemptSelect;

/**
 * What a finished side effect came to (api.md "Jobs"): `done`, or `skipped` with the reason (a first
 * reply to a lead the business answered: `business_already_replied`), from its side-effect record
 * when it has one.
 */
export class JobResult {
  @ApiProperty({ enum: ["done", "skipped"] })
  status!: "done" | "skipped";

  @ApiPropertyOptional({ description: "e.g. `business_already_replied`, or the destination's id" })
  ref?: string;
}

/** A job as the admin API lists it (JOB_VIEW's columns and its result). */
export class JobView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @NullableId()
  connectionId!: string | null;

  @NullableId("null for connection and alert jobs")
  receiptId!: string | null;

  @ApiProperty({ enum: OPERATIONS })
  operation!: string;

  @ApiProperty({ description: "what the destination sees as the idempotency key" })
  jobKey!: string;

  @ApiProperty({ enum: JOB_STATUSES })
  status!: string;

  // OAS 3.0.3: a nullable enum lists null among its values.
  @ApiProperty({
    type: String,
    enum: [...WAITING_FOR, null],
    nullable: true,
    description: "why a `waiting` job waits",
  })
  waitingFor!: string | null;

  @ApiProperty()
  attempts!: number;

  @ApiProperty()
  maxAttempts!: number;

  @ApiProperty()
  nextAttemptAt!: Date;

  @NullableString("e.g. `http_500`, `timeout`")
  lastErrorCode!: string | null;

  @NullableDate()
  lastErrorAt!: Date | null;

  @NullableDate()
  completedAt!: Date | null;

  @ApiProperty()
  createdAt!: Date;

  @ApiProperty()
  updatedAt!: Date;

  @ApiProperty({ type: () => JobResult, nullable: true, description: "null until the job succeeded" })
  result!: JobResult | null;
}

/** One attempt of a job; the one running now has no end yet. */
export class AttemptView {
  @ApiProperty()
  number!: number;

  @ApiProperty()
  startedAt!: Date;

  @NullableDate()
  finishedAt!: Date | null;

  @NullableString("succeeded, failed, … (null while running)")
  outcome!: string | null;

  @NullableString()
  errorCode!: string | null;

  @NullableNumber()
  durationMs!: number | null;
}

/** GET /admin/jobs/{id}: the job with every attempt. */
export class JobDetail extends JobView {
  @ApiProperty({ type: () => AttemptView, isArray: true, description: "oldest first" })
  attemptHistory!: AttemptView[];
}

function resultOf(
  status: string,
  record: { status: string; externalRef: string | null } | undefined,
): JobResult | null {
  if (status !== "succeeded") return null;
  const ref = record?.externalRef ? { ref: record.externalRef } : {};
  return { status: record?.status === "skipped" ? "skipped" : "done", ...ref };
}

/**
 * The job's last attempt as the job row holds it, when job_attempts has no finished row of it: the
 * running one (its row is written when it ends), or the one that succeeded (a success writes no
 * row: SUCCEEDED_ATTEMPT in src/jobs/state/sql-fragments.ts).
 */
function attemptOnJob(job: {
  status: string;
  attempts: number;
  attemptStartedAt: Date | null;
  completedAt: Date | null;
}): AttemptView | undefined {
  const { attempts: number, attemptStartedAt: startedAt, completedAt } = job;
  if (!startedAt) return undefined;
  if (job.status === "running") {
    return { number, startedAt, finishedAt: null, outcome: null, errorCode: null, durationMs: null };
  }
  if (job.status !== "succeeded" || !completedAt) return undefined;
  const durationMs = completedAt.getTime() - startedAt.getTime();
  return { number, startedAt, finishedAt: completedAt, outcome: "succeeded", errorCode: null, durationMs };
}

@Injectable()
export class JobsAdminRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The list, on `db`: the primary, or the read replica (ListReads). */
  async list(scope: TenantScope, query: JobsQuery, db: PrismaService = this.prisma): Promise<JobView[]> {
    const page = pageAfter("createdAt", query);
    const jobs = await db.job.findMany({
      where: {
        AND: [tenantWhere(scope), page.where],
        status: query.status,
        operation: query.operation,
        connectionId: query.connectionId,
        receiptId: query.receiptId,
        lastErrorCode: query.errorCode,
        createdAt: timeRange(query),
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: JOB_VIEW,
    });
    const records = await this.records(scope, jobs, db);
    return jobs.map((job) => ({ ...job, result: resultOf(job.status, records.get(job.jobKey)) }));
  }

  /** The side-effect records of succeeded jobs, by job key: one query. */
  private async records(
    scope: TenantScope,
    jobs: { jobKey: string; status: string }[],
    db: PrismaService = this.prisma,
  ) {
    const keys = jobs.filter((job) => job.status === "succeeded").map((job) => job.jobKey);
    if (keys.length === 0) return new Map<string, { status: string; externalRef: string | null }>();
    const rows = await db.sideEffect.findMany({
      where: { ...tenantWhere(scope), jobKey: { in: keys } },
      select: { jobKey: true, status: true, externalRef: true },
    });
    return new Map(rows.map((row) => [row.jobKey, row]));
  }

  /**
   * The job with every attempt (`attemptHistory`), the one running now and the one that succeeded
   * included (read off the job: attemptOnJob); undefined when the scope has no such job.
   */
  async find(scope: TenantScope, id: string): Promise<JobDetail | undefined> {
    const job = await this.prisma.job.findFirst({
      where: { ...tenantWhere(scope), id },
      select: {
        ...JOB_VIEW,
        attemptStartedAt: true,
        attemptRows: { where: tenantWhere(scope), select: ATTEMPT_VIEW, orderBy: { number: "asc" } },
      },
    });
    if (!job) return undefined;
    const { attemptRows, attemptStartedAt: _startedAt, ...rest } = job;
    const onJob = attemptOnJob(job);
    // A closed row of that attempt (an earlier version wrote it) stands; one left open is onJob's.
    const written = attemptRows.some((row) => row.number === onJob?.number && row.finishedAt !== null);
    const records = await this.records(scope, [job]);
    return {
      ...rest,
      result: resultOf(job.status, records.get(job.jobKey)),
      attemptHistory:
        onJob && !written
          ? [...attemptRows.filter((row) => row.number !== onJob.number), onJob]
          : attemptRows,
    };
  }
}
