// Backfill (api.md "Connecting provider accounts ... keeping them in sync"): pull a connection's
// leads of a window through the ingest path, as a `reconciliation` job whose backfill row shows
// its progress. The count of the window's leads is bounded in the request (BackfillCounter); a dry
// run's count that outlasts it goes on in the worker as a `counting` backfill row and its job. One
// running backfill or count per connection, decided by a unique index.
import { CONFIG, type ReconciliationConfig } from "../config/sections.js";
import { randomUUID } from "node:crypto";
import { Inject, Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { IsBoolean, IsDefined } from "class-validator";
import type { Principal, TenantScope } from "../auth/principal.js";
import { tenantParam } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { DateTimeField, Optional } from "../common/validation.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions, type Tx } from "../database/transactions.js";
import { JobQueue } from "../jobs/job-queue.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import { capabilities } from "../providers/capabilities.js";
import type { Provider } from "../providers/provider-event.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { BackfillCounter, type CountedConnection, notAvailable } from "./backfill-count.js";
import { notFound } from "../common/id.pipe.js";

/**
 * A `running` or `counting` row with no job this old was left by a request that died mid-count
 * (its count stops after 10 s): it no longer holds the connection, and shows as failed (`interrupted`).
 */
const ABANDONED_COUNT_SECONDS = 60;

export class BackfillBody {
  @ApiProperty({ format: "date-time", description: "leads created at or after this" })
  @IsDefined()
  @DateTimeField("from")
  from!: Date;

  @ApiProperty({ format: "date-time", description: "leads created at or before this" })
  @IsDefined()
  @DateTimeField("to")
  to!: Date;

  @ApiPropertyOptional({ description: "count the window's leads; change nothing" })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;
}

export interface BackfillView {
  id: string;
  connectionId: string;
  /** `counting`: a dry run's count that outlasted its request, going on in the worker. */
  status: "running" | "counting" | "done" | "failed";
  /** Null until counted. */
  matched: number | null;
  ingested: number;
  duplicates: number;
  error?: string;
}

/** A dry run counted within the request. */
export class BackfillCount {
  @ApiProperty({ description: "the window's leads" })
  matched!: number;
}

/** A backfill, or a dry run's count, going on in the worker. */
export class BackfillRunning {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ type: Number, nullable: true, description: "null while a dry run's count goes on" })
  matched!: number | null;
}

/** GET /admin/backfills/{id}: a backfill's (or a count's) progress. */
export class BackfillProgress implements BackfillView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  connectionId!: string;

  @ApiProperty({
    enum: ["running", "counting", "done", "failed"],
    description: "`counting`: a dry run's count that outlasted its request",
  })
  status!: BackfillView["status"];

  @ApiProperty({ type: Number, nullable: true, description: "null until counted" })
  matched!: number | null;

  @ApiProperty()
  ingested!: number;

  @ApiProperty()
  duplicates!: number;

  @ApiPropertyOptional({ description: "why it failed" })
  error?: string;
}

/** What the route answers: a dry run's count (200), or a backfill or count going on (202). */
export type BackfillStarted =
  { status: 200; body: { matched: number } } | { status: 202; body: { id: string; matched: number | null } };

const invalid = (field: string, problem: string) =>
  new AppError(400, "validation_failed", `Invalid input: ${field}.`, { [field]: [problem] });

const inProgress = () =>
  new AppError(409, "backfill_in_progress", "Another backfill or count of this connection is running.");

type Window = { from: Date; to: Date };

@Injectable()
export class BackfillsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly counter: BackfillCounter,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    private readonly audit: AuditRepository,
    @Inject(CONFIG.reconciliation) private readonly config: ReconciliationConfig,
  ) {}

  /**
   * Both hold the connection from the start: a row (`running` for a backfill, `counting` for a dry
   * run) the unique index lets one of at a time, then the count in the request (BackfillCounter).
   * A dry run counted in time leaves nothing behind: `200 { matched }`. Otherwise the row gets its
   * job, which backfills (or only counts) in the worker: `202 { id, matched }`, `matched: null`
   * when the count outlasted the request. A request that dies between the two leaves a row with no
   * job, which stops holding the connection after ABANDONED_COUNT_SECONDS.
   */
  async start(
    by: Principal,
    scope: TenantScope,
    connectionId: string,
    body: BackfillBody,
  ): Promise<BackfillStarted> {
    const window = this.window(body);
    const connection = await this.connectionOf(scope, connectionId);
    const dryRun = body.dryRun === true;
    const id = randomUUID();
    await this.transactions
      .run(async (tx) => {
        await this.release(tx, connection);
        await tx.$executeRaw`INSERT INTO backfills (id, tenant_id, connection_id, api_key_id, window_from, window_to, status)
          VALUES (${id}::uuid, ${connection.tenantId}::uuid, ${connection.id}::uuid, ${by.keyId}::uuid,
                  ${window.from}, ${window.to}, ${dryRun ? "counting" : "running"})`;
      })
      .catch(refuseOverlap);
    const forget = () =>
      this.prisma.$executeRaw`DELETE FROM backfills WHERE tenant_id = ${connection.tenantId}::uuid
        AND id = ${id}::uuid AND job_id IS NULL`;
    let matched: number | null;
    try {
      matched = await this.counter.withinRequest(connection, window);
    } catch (error) {
      await forget();
      throw error;
    }
    if (dryRun && matched !== null) {
      await forget();
      return { status: 200, body: { matched } };
    }
    const jobs = await this.transactions.run(async (tx) => {
      await tx.$executeRaw`UPDATE backfills SET matched = ${matched}
        WHERE tenant_id = ${connection.tenantId}::uuid AND id = ${id}::uuid`;
      const created = await this.createJob(tx, connection, id, dryRun ? "count" : "backfill");
      // A dry run changes nothing: like every dry run, its count leaves no audit entry.
      if (!dryRun) {
        await this.audit.record(tx, by, {
          action: "connection.backfill",
          tenantId: connection.tenantId,
          targetType: "connection",
          targetId: connection.id,
          details: { backfillId: id, from: window.from.toISOString(), to: window.to.toISOString(), matched },
        });
      }
      return created;
    });
    await this.queue.enqueue(jobs);
    return { status: 202, body: { id, matched } };
  }

  async find(scope: TenantScope, id: string): Promise<BackfillView> {
    const tenantId = tenantParam(scope);
    const rows = await this.prisma.$queryRaw<
      {
        id: string;
        connection_id: string;
        status: BackfillView["status"];
        matched: number | null;
        ingested: number;
        duplicates: number;
        error: string | null;
        job_status: string | null;
        job_error: string | null;
        abandoned: boolean;
      }[]
    >`SELECT b.id, b.connection_id, b.status, b.matched, b.ingested, b.duplicates, b.error,
             j.status AS job_status, j.last_error_code AS job_error,
             (b.status IN ('running', 'counting') AND b.job_id IS NULL
               AND b.created_at < now() - ${ABANDONED_COUNT_SECONDS}::int * interval '1 second') AS abandoned
      FROM backfills b LEFT JOIN jobs j ON j.id = b.job_id AND j.tenant_id = b.tenant_id
      WHERE b.id = ${id}::uuid AND (${tenantId}::uuid IS NULL OR b.tenant_id = ${tenantId}::uuid)`;
    const row = rows[0];
    if (!row) throw notFound("backfill");
    // A job that ended without finishing the backfill or count (the connection was disabled, the
    // job died) failed it; so did a request that died before the row got its job.
    const unfinished = row.status === "running" || row.status === "counting";
    const ended = unfinished && (row.job_status === "dead" || row.job_status === "cancelled");
    const status = ended || row.abandoned ? "failed" : row.status;
    const error = row.abandoned ? "interrupted" : ended ? (row.job_error ?? row.job_status!) : row.error;
    return {
      id: row.id,
      connectionId: row.connection_id,
      status,
      matched: row.matched,
      ingested: row.ingested,
      duplicates: row.duplicates,
      ...(error === null ? {} : { error }),
    };
  }

  /** The scope's connection, if it can be backfilled (404, 409 connection_disabled, 422 otherwise). */
  private async connectionOf(scope: TenantScope, connectionId: string): Promise<CountedConnection> {
    const tenantId = tenantParam(scope);
    const connection = await this.prisma.connection.findFirst({
      where: { id: connectionId, ...(tenantId === null ? {} : { tenantId }) },
      select: {
        id: true,
        tenantId: true,
        provider: true,
        externalAccountId: true,
        status: true,
        credentials: true,
      },
    });
    if (!connection) throw notFound("connection");
    if (connection.status === "disabled") {
      throw new AppError(
        409,
        "connection_disabled",
        "The connection is disabled; it can no longer be backfilled.",
      );
    }
    const api = capabilities(connection.provider as Provider).api;
    if (!api || connection.credentials === null) {
      throw notAvailable(
        !api
          ? `${connection.provider} offers no API to list its leads: backfill is manual.`
          : "The connection has no provider API credentials: connect it with OAuth first.",
      );
    }
    return connection;
  }

  /**
   * Before a new backfill or count of the connection: one whose job ended without finishing it
   * (cancelled, dead), or one its request left behind, no longer holds the connection.
   */
  private async release(tx: Tx, connection: CountedConnection): Promise<void> {
    await tx.$executeRaw`UPDATE backfills b SET status = 'failed', error = COALESCE(j.last_error_code, j.status), finished_at = now()
      FROM jobs j WHERE j.id = b.job_id AND j.tenant_id = b.tenant_id AND b.tenant_id = ${connection.tenantId}::uuid
        AND b.connection_id = ${connection.id}::uuid AND b.status IN ('running', 'counting')
        AND j.status IN ('dead', 'cancelled')`;
    await tx.$executeRaw`UPDATE backfills SET status = 'failed', error = 'interrupted', finished_at = now()
      WHERE tenant_id = ${connection.tenantId}::uuid AND connection_id = ${connection.id}::uuid
        AND status IN ('running', 'counting') AND job_id IS NULL
        AND created_at < now() - ${ABANDONED_COUNT_SECONDS}::int * interval '1 second'`;
  }

  /** The `reconciliation` job of backfill row `id`, named on the row. */
  private async createJob(tx: Tx, connection: CountedConnection, id: string, kind: "backfill" | "count") {
    const created = await this.state.create(
      [
        {
          tenantId: connection.tenantId,
          connectionId: connection.id,
          operation: "reconciliation",
          jobKey: jobKey("reconciliation", `${connection.id}.${kind}.${id}`),
        },
      ],
      tx,
    );
    await tx.$executeRaw`UPDATE backfills SET job_id = ${created[0]!.id}::uuid
      WHERE tenant_id = ${connection.tenantId}::uuid AND id = ${id}::uuid`;
    return created;
  }

  private window(body: BackfillBody): Window {
    if (body.from >= body.to) throw invalid("to", "to must be after from");
    const maxMs = this.config.backfillMaxDays * 86_400_000;
    if (body.to.getTime() - body.from.getTime() > maxMs) {
      throw invalid(
        "to",
        `the window may cover at most ${this.config.backfillMaxDays} days (BACKFILL_MAX_DAYS)`,
      );
    }
    if (body.from.getTime() > Date.now()) throw invalid("from", "from must not be in the future");
    return { from: body.from, to: body.to };
  }
}

/** The unique index backfills_one_running: another backfill or count of this connection runs. */
function refuseOverlap(error: unknown): never {
  if (isUniqueViolation(error)) throw inProgress();
  throw error;
}

function isUniqueViolation(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current = error; current && typeof current === "object" && !seen.has(current);) {
    seen.add(current);
    const record = current as {
      code?: unknown;
      meta?: { code?: unknown };
      cause?: unknown;
      message?: unknown;
    };
    if (record.code === "23505" || record.meta?.code === "23505" || record.code === "P2002") return true;
    if (typeof record.message === "string" && record.message.includes("backfills_one_running")) return true;
    current = record.cause;
  }
  return false;
}
