import { createServer, type Server } from "node:http";
import { Injectable } from "@nestjs/common";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The process's Prometheus metrics (served at GET /metrics). */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly deliveries = new Counter({
    name: "leadgate_deliveries_total",
    help: "Webhook deliveries by provider and outcome (accepted, duplicate, ignored, or the error code).",
    labelNames: ["provider", "outcome"] as const,
    registers: [this.registry],
  });

  readonly ingestSeconds = new Histogram({
    name: "leadgate_ingest_duration_seconds",
    help: "Time from a delivery's arrival to its answer.",
    labelNames: ["provider"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly firstResponseSeconds = new Histogram({
    name: "leadgate_first_response_seconds",
    help: "Time from a lead's creation at the provider to its first response (wall clock), by provider and who answered (auto, business); observed when it is recorded or corrected earlier.",
    labelNames: ["provider", "by"] as const,
    buckets: [10, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600, 86_400],
    registers: [this.registry],
  });

  readonly connectionReads = new Counter({
    name: "leadgate_ingest_connection_reads_total",
    help: "Connections read for webhook deliveries, by source: the API's cache, or the database (a first delivery, an expired entry, or a cached connection that refused the delivery or had changed when its receipt was written).",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });

  readonly conflicts = new Counter({
    name: "leadgate_payload_conflicts_total",
    help: "Deliveries whose idempotency key was known with a different payload digest.",
    registers: [this.registry],
  });

  readonly enqueueFailures = new Counter({
    name: "leadgate_enqueue_failures_total",
    help: "Jobs committed to Postgres but not handed to BullMQ (by a dispatcher, a release, a retry or a replay; the dispatcher's poll enqueues them later).",
    registers: [this.registry],
  });

  readonly jobs = new Counter({
    name: "leadgate_jobs_total",
    help: "Job attempts recorded, by operation and the status they left the job in (succeeded, retrying, waiting, dead, blocked, held, cancelled).",
    labelNames: ["operation", "status"] as const,
    registers: [this.registry],
  });

  readonly jobSeconds = new Histogram({
    name: "leadgate_job_duration_seconds",
    help: "Duration of a job attempt, by operation and resulting status.",
    labelNames: ["operation", "status"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly refusedTransitions = new Counter({
    name: "leadgate_job_transitions_refused_total",
    help: "Job transitions the database refused because the job was no longer in a status the transition may start from.",
    labelNames: ["transition"] as const,
    registers: [this.registry],
  });

  readonly dispatched = new Counter({
    name: "leadgate_dispatcher_enqueued_total",
    help: "Jobs and replay batches the dispatcher handed (again) to BullMQ: committed (outbox jobs it heard of at their commit), due, released (held jobs of active connections), replay.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  readonly ranHere = new Counter({
    name: "leadgate_dispatcher_ran_here_total",
    help: 'Outbox jobs the listening worker\'s dispatcher ran itself at their commit, in a free slot of their operation, without BullMQ (the rest: leadgate_dispatcher_enqueued_total{reason="committed"}).',
    registers: [this.registry],
  });

  readonly releasedRunsNoSlot = new Counter({
    name: "leadgate_released_runs_no_slot_total",
    help: "Jobs to run in the worker at once (released by a success, or heard of at their commit) that found every slot of their operation taken: they waited for one (RELEASED_RUN_WAIT_MS), or went to BullMQ.",
    labelNames: ["operation"] as const,
    registers: [this.registry],
  });

  readonly retentionPurged = new Counter({
    name: "leadgate_retention_purged_total",
    help: "Rows purged by retention: receipts (deleted with their jobs), jobs (finished jobs without a receipt), and the DEFAULT partitions' payloads, attempts, messages and audit entries; partitions: whole months dropped.",
    labelNames: ["what"] as const,
    registers: [this.registry],
  });

  readonly retentionFailures = new Counter({
    name: "leadgate_retention_failures_total",
    help: "Parts of a retention pass that failed (the pass went on with the others): a partitioned table's maintenance, drops or DEFAULT purge, or receipts (receipts and jobs).",
    labelNames: ["table"] as const,
    registers: [this.registry],
  });

  readonly rateLimitSkipped = new Counter({
    name: "leadgate_rate_limit_unchecked_total",
    help: "Deliveries let through without a rate-limit check because Redis did not answer.",
    registers: [this.registry],
  });

  readonly missedLeads = new Counter({
    name: "leadgate_reconcile_missed_leads_total",
    help: "Leads found by reconciliation that no webhook had delivered within the grace period (RECONCILE_GRACE_SECONDS).",
    labelNames: ["provider"] as const,
    registers: [this.registry],
  });

  readonly reconcileRuns = new Counter({
    name: "leadgate_reconcile_runs_total",
    help: "Reconciliation and backfill runs by provider, kind (periodic, backfill) and outcome (active, manual, error).",
    labelNames: ["provider", "kind", "outcome"] as const,
    registers: [this.registry],
  });

  readonly replicaFallbacks = new Counter({
    name: "leadgate_replica_fallbacks_total",
    help: "Admin list and report reads that failed on the read replica (DATABASE_REPLICA_URL) and were answered from the primary.",
    registers: [this.registry],
  });

  readonly passwordChecksRunning = new Gauge({
    name: "leadgate_password_checks_running",
    help: "Console password hashes and verifications (argon2id) running now in this process (at most 4).",
    registers: [this.registry],
  });

  readonly passwordChecksPeak = new Gauge({
    name: "leadgate_password_checks_running_max",
    help: "The most console password hashes and verifications (argon2id) that ran at once in this process since it started.",
    registers: [this.registry],
  });

  readonly passwordChecksWaited = new Counter({
    name: "leadgate_password_checks_waited_total",
    help: "Console password hashes and verifications that waited for one of the process's 4 slots.",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "leadgate_" });
  }
}

export const METRICS_UNAUTHORIZED = {
  error: "unauthorized",
  message: "The metrics need Authorization: Bearer <METRICS_TOKEN>.",
};

/**
 * The worker's own /metrics (WORKER_METRICS_PORT on WORKER_METRICS_HOST, loopback by default): its
 * job, dispatcher and retention counters, for scrapes whose Authorization header `authorized`
 * accepts (401 otherwise). Resolves once it listens.
 */
export async function serveMetrics(
  metrics: Metrics,
  options: { port: number; host: string; authorized: (authorization: string | undefined) => boolean },
): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url !== "/metrics") return void response.writeHead(404).end();
    if (!options.authorized(request.headers.authorization)) {
      return void response
        .writeHead(401, { "content-type": "application/json; charset=utf-8" })
        .end(JSON.stringify(METRICS_UNAUTHORIZED));
    }
    void metrics.registry.metrics().then(
      (text) => response.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject).listen(options.port, options.host, resolve);
  });
  return server.unref();
}
