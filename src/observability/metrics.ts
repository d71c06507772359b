import { Injectable } from "@nestjs/common";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

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

  readonly conflicts = new Counter({
    name: "leadgate_payload_conflicts_total",
    help: "Deliveries whose idempotency key was known with a different payload digest.",
    registers: [this.registry],
  });

  readonly enqueueFailures = new Counter({
    name: "leadgate_enqueue_failures_total",
    help: "Jobs committed to Postgres but not handed to BullMQ at ingest (the dispatcher enqueues them later).",
    registers: [this.registry],
  });

  readonly rateLimitSkipped = new Counter({
    name: "leadgate_rate_limit_unchecked_total",
    help: "Deliveries let through without a rate-limit check because Redis did not answer.",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "leadgate_" });
  }
}
