// Backfill (api.md "Connecting provider accounts ... keeping them in sync"): pull a connection's
// leads of a window through the ingest path, as a `reconciliation` job whose backfill row shows
// its progress. One running backfill per connection, decided by a unique index.
import { CONFIG, type ReconciliationConfig } from "../config/sections.js";
import { randomUUID } from "node:crypto";
import { Inject, Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { IsBoolean, IsDefined } from "class-validator";
import type { Principal, TenantScope } from "../auth/principal.js";
import { tenantParam } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { DateTimeField, Optional } from "../common/validation.js";
import { classify, WaitRequired } from "../common/outbound/errors.js";
import { ProviderTokens } from "../connections/provider-tokens.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions } from "../database/transactions.js";
import { JobQueue } from "../jobs/job-queue.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import { capabilities } from "../providers/capabilities.js";
import type { Provider } from "../providers/provider-event.js";
import { ListingUnavailable } from "../providers/lead-source.js";
import { LeadScan } from "../reconciliation/lead-scan.js";
import { BACKFILL_MAX_LEADS } from "../reconciliation/backfill-limits.js";
import { AuditRepository } from "./audit.js";
import { notFound } from "./id.pipe.js";

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
  status: "running" | "done" | "failed";
  matched: number;
  ingested: number;
  duplicates: number;
  error?: string;
}

const invalid = (field: string, problem: string) =>
  new AppError(400, "validation_failed", `Invalid input: ${field}.`, { [field]: [problem] });

@Injectable()
export class BackfillsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly tokens: ProviderTokens,
    private readonly scans: LeadScan,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    private readonly audit: AuditRepository,
    @Inject(CONFIG.reconciliation) private readonly config: ReconciliationConfig,
  ) {}

  /**
   * Counts the window's leads on the provider (both runs: the answer carries `matched`), then, unless
   * a dry run, records the backfill and its job in one transaction with the audit row.
   */
  async start(by: Principal, scope: TenantScope, connectionId: string, body: BackfillBody) {
    const window = this.window(body);
    const connection = await this.prisma.connection.findFirst({
      where: { id: connectionId, ...(tenantParam(scope) === null ? {} : { tenantId: tenantParam(scope)! }) },
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
    const matched = await this.count(connection, window);
    if (body.dryRun === true) return { dryRun: true as const, matched };

    const id = randomUUID();
    const jobs = await this.transactions
      .run(async (tx) => {
        // A running backfill whose job ended without finishing it (cancelled, dead) no longer holds the connection.
        await tx.$executeRaw`UPDATE backfills b SET status = 'failed', error = COALESCE(j.last_error_code, j.status), finished_at = now()
          FROM jobs j WHERE j.id = b.job_id AND j.tenant_id = b.tenant_id AND b.tenant_id = ${connection.tenantId}::uuid
            AND b.connection_id = ${connection.id}::uuid AND b.status = 'running' AND j.status IN ('dead', 'cancelled')`;
        await tx.$executeRaw`INSERT INTO backfills (id, tenant_id, connection_id, api_key_id, window_from, window_to, matched)
          VALUES (${id}::uuid, ${connection.tenantId}::uuid, ${connection.id}::uuid, ${by.keyId}::uuid,
                  ${window.from}, ${window.to}, ${matched})`;
        const created = await this.state.create(
          [
            {
              tenantId: connection.tenantId,
              connectionId: connection.id,
              operation: "reconciliation",
              jobKey: jobKey("reconciliation", `${connection.id}.backfill.${id}`),
            },
          ],
          tx,
        );
        await tx.$executeRaw`UPDATE backfills SET job_id = ${created[0]!.id}::uuid
          WHERE tenant_id = ${connection.tenantId}::uuid AND id = ${id}::uuid`;
        await this.audit.record(tx, by, {
          action: "connection.backfill",
          tenantId: connection.tenantId,
          targetType: "connection",
          targetId: connection.id,
          details: { backfillId: id, from: window.from.toISOString(), to: window.to.toISOString(), matched },
        });
        return created;
      })
      .catch((error: unknown) => {
        // The unique index backfills_one_running: another backfill of this connection runs.
        if (isUniqueViolation(error)) {
          throw new AppError(409, "backfill_in_progress", "Another backfill of this connection is running.");
        }
        throw error;
      });
    await this.queue.enqueue(jobs);
    return { dryRun: false as const, id, matched };
  }

  async find(scope: TenantScope, id: string): Promise<BackfillView> {
    const tenantId = tenantParam(scope);
    const rows = await this.prisma.$queryRaw<
      {
        id: string;
        connection_id: string;
        status: BackfillView["status"];
        matched: number;
        ingested: number;
        duplicates: number;
        error: string | null;
        job_status: string | null;
        job_error: string | null;
      }[]
    >`SELECT b.id, b.connection_id, b.status, b.matched, b.ingested, b.duplicates, b.error,
             j.status AS job_status, j.last_error_code AS job_error
      FROM backfills b LEFT JOIN jobs j ON j.id = b.job_id AND j.tenant_id = b.tenant_id
      WHERE b.id = ${id}::uuid AND (${tenantId}::uuid IS NULL OR b.tenant_id = ${tenantId}::uuid)`;
    const row = rows[0];
    if (!row) throw notFound("backfill");
    // A job that ended without finishing the backfill (the connection was disabled, the job died) failed it.
    const ended = row.status === "running" && (row.job_status === "dead" || row.job_status === "cancelled");
    const status = ended ? "failed" : row.status;
    const error = ended ? (row.job_error ?? row.job_status!) : row.error;
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

  private window(body: BackfillBody): { from: Date; to: Date } {
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

  /** The window's leads on the provider, read now (paced like every provider call). */
  private async count(
    connection: { id: string; tenantId: string; provider: string; externalAccountId: string },
    window: { from: Date; to: Date },
  ): Promise<number> {
    try {
      const token = await this.tokens.current(connection);
      const scan = await this.scans.scan(
        {
          tenantId: connection.tenantId,
          connectionId: connection.id,
          provider: connection.provider as Provider,
          account: { externalAccountId: connection.externalAccountId, token },
        },
        { ...window, maxLeads: BACKFILL_MAX_LEADS },
      );
      return scan.matched;
    } catch (error) {
      if (error instanceof ListingUnavailable) {
        throw notAvailable(
          `The provider offers no list of this account's leads (${error.code}): backfill is manual.`,
        );
      }
      if (error instanceof WaitRequired) {
        const seconds = Math.max(1, Math.ceil((error.retryAt.getTime() - Date.now()) / 1000));
        throw new AppError(
          429,
          "provider_quota",
          "The provider's call budget is spent; retry later.",
          undefined,
          {
            "retry-after": String(seconds),
          },
        );
      }
      const { code, kind } = classify(error);
      if (kind === "credential") {
        throw new AppError(
          409,
          "credential_error",
          "The provider refused the connection's credentials; reconnect it.",
          { code },
        );
      }
      throw new AppError(
        502,
        "provider_error",
        "The provider's list of leads could not be read; retry later.",
        { code },
      );
    }
  }
}

const notAvailable = (message: string) => new AppError(422, "backfill_not_available", message);

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
