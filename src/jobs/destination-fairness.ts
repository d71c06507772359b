// Fairness between tenants on the outbound side: a call to a tenant-set destination goes
// through the destination's concurrency cap in this worker and its circuit (shared by all workers).
// When the cap is full for long, or the circuit is open, the job waits (no attempt used) and gives
// its worker slot back, so a slow or dead destination cannot take the slots other tenants need.
// CRM deliveries (their connection's CRM URL) and notifications (their channel's URL, or the SMTP
// server: src/alerts/notifications/) call through it; an operation whose destinations this layer
// cannot read tells where its jobs call (registerDestinations), so a closing circuit ends their waits.
import { CONFIG, type OutboundConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { CircuitBreaker, isDestinationFailure, originOf } from "../common/outbound/circuit-breaker.js";
import { DestinationLimits } from "../common/outbound/destination-limits.js";
import { WaitRequired } from "../common/outbound/errors.js";
import { PrismaService } from "../database/prisma.service.js";
import { JobQueue } from "./job-queue.js";
import { type Operation, OPERATION_SETTINGS } from "./operations.js";
import { JobStateMachine } from "./state/job-state-machine.js";

/**
 * A call over the cap waits this long for a slot (a fast destination frees one within
 * milliseconds); when even the newest call in flight is older than this, it does not wait.
 */
const SLOT_WAIT_MS = 500;
/**
 * ...and then the job gives its worker slot back and waits (`waitingFor: "quota"`, no attempt) at
 * least this long, or as long as the newest call in flight has run (a slow destination frees no
 * slot sooner), spread by up to half again.
 */
const SATURATED_WAIT_MS = 1_000;
/** Jobs released at most per closing (the rest run when their wait is over). */
const RELEASE_LIMIT = 10_000;

/** A job waiting for a circuit, as `Destinations` is asked about it. */
export interface WaitingJob {
  id: string;
  tenantId: string;
  jobKey: string;
}

/** The destination URL (its origin counts) of each of `jobs`, by job id; one not known now is left out. */
export type Destinations = (jobs: readonly WaitingJob[]) => Promise<Map<string, string>>;

@Injectable()
export class DestinationFairness {
  private readonly logger = new Logger("destinations");
  private readonly limits = new Map<Operation, DestinationLimits>();
  /** Where the jobs of operations of the layers above call (registerDestinations). */
  private readonly destinations = new Map<Operation, Destinations>();

  constructor(
    private readonly circuits: CircuitBreaker,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    private readonly prisma: PrismaService,
    @Inject(CONFIG.outbound) private readonly config: OutboundConfig,
  ) {}

  /**
   * Makes `send` (one call of `operation` to `url`) when the destination admits it. Throws
   * `WaitRequired` instead of calling when the destination's circuit is open or its cap in this
   * worker stays full; otherwise what `send` answers or throws. A failed probe of an open circuit
   * throws `WaitRequired("circuit")` too: it is the destination's failure, not the job's.
   */
  async call<T>(operation: Operation, url: string, send: () => Promise<T>): Promise<T> {
    const origin = originOf(url);
    const limits = this.limitsOf(operation);
    const release = await limits.acquire(origin);
    if (!release) throw saturated(limits.slowFor(origin));
    try {
      const probe = await this.circuits.admit(origin);
      try {
        const answer = await send();
        await this.answered(origin);
        return answer;
      } catch (error) {
        if (!isDestinationFailure(error)) {
          if (isHttpAnswer(error)) await this.answered(origin);
          throw error;
        }
        const circuit = await this.circuits.failed(origin, error);
        if (probe && circuit.probeAt) throw new WaitRequired("circuit", circuit.probeAt);
        throw error;
      }
    } finally {
      release();
    }
  }

  /**
   * Throws `WaitRequired` when the destination of `url` is known to be failing (its circuit) or
   * slow with every slot of this worker taken (its cap): a cheap check before a job prepares its
   * call. The circuit first: while hung calls hold every slot of a destination whose circuit is
   * open, the wait that applies is the circuit's (until a probe); a quota wait would bring the job
   * back within seconds, again and again.
   */
  async check(operation: Operation, url: string): Promise<void> {
    const origin = originOf(url);
    await this.circuits.check(origin);
    const slow = this.limitsOf(operation).slowFor(origin);
    if (slow !== undefined) throw saturated(slow);
  }

  /**
   * Tells where `operation`'s jobs call, for an operation whose destination is not a connection's
   * CRM URL (notifications: a channel's URL, which only the alerts module reads): when a circuit
   * closes, its waiting jobs on that origin run at once instead of at their wait's end.
   */
  registerDestinations(operation: Operation, destinations: Destinations): void {
    this.destinations.set(operation, destinations);
  }

  private limitsOf(operation: Operation): DestinationLimits {
    let limits = this.limits.get(operation);
    if (!limits) {
      const cap =
        this.config.destinationMaxConcurrency ??
        Math.max(1, Math.floor(OPERATION_SETTINGS[operation].concurrency / 2));
      limits = new DestinationLimits(cap, SLOT_WAIT_MS);
      this.limits.set(operation, limits);
    }
    return limits;
  }

  /** The destination answered: when that closed its circuit, its waiting jobs run now, not at their probe time. */
  private async answered(origin: string): Promise<void> {
    if (!(await this.circuits.succeeded(origin))) return;
    void this.releaseWaits(origin).catch((error: unknown) =>
      this.logger.warn({
        msg: "could not release the jobs of a closed circuit; they run at their wait's end",
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  }

  /**
   * The jobs waiting for the circuit of `origin` end their wait: CRM deliveries (their connection's
   * CRM URL) and the jobs of the operations registered with registerDestinations.
   */
  private async releaseWaits(origin: string): Promise<void> {
    const { rows } = await this.prisma.pool.query<{ id: string; url: string | null }>(
      `SELECT j.id, c.settings -> 'crmDestination' ->> 'url' AS url
       FROM jobs j JOIN connections c ON c.id = j.connection_id AND c.tenant_id = j.tenant_id
       WHERE j.status = 'waiting' AND j.waiting_for = 'circuit' AND j.operation = 'crm-delivery'
       LIMIT $1`,
      [RELEASE_LIMIT],
    );
    const ids = rows.filter((row) => row.url !== null && sameOrigin(row.url, origin)).map((row) => row.id);
    for (const [operation, destinations] of this.destinations) {
      const { rows: waiting } = await this.prisma.pool.query<WaitingJob>(
        `SELECT id, tenant_id AS "tenantId", job_key AS "jobKey" FROM jobs
         WHERE status = 'waiting' AND waiting_for = 'circuit' AND operation = $1 LIMIT $2`,
        [operation, RELEASE_LIMIT],
      );
      if (waiting.length === 0) continue;
      for (const [id, url] of await destinations(waiting)) if (sameOrigin(url, origin)) ids.push(id);
    }
    if (ids.length === 0) return;
    const released = await this.state.endCircuitWaits(ids);
    await this.queue.enqueue(released);
    this.logger.log({ msg: "released the jobs waiting for a closed circuit", origin, jobs: released.length });
  }
}

/** The wait of a job whose destination's slots in this worker are all taken (by calls running `slowMs`). */
function saturated(slowMs = 0): WaitRequired {
  const waitMs = Math.max(SATURATED_WAIT_MS, slowMs) * (1 + Math.random() / 2);
  return new WaitRequired("quota", new Date(Date.now() + waitMs));
}

/** An HTTP answer of the destination (a 4xx, a 429): it is up, whatever it said. */
function isHttpAnswer(error: unknown): boolean {
  return error instanceof Error && "code" in error && /^http_\d{3}$/.test(String(error.code));
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return originOf(url) === origin;
  } catch {
    return false;
  }
}
