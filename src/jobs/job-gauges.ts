import { Injectable } from "@nestjs/common";
import { Gauge } from "prom-client";
import { PrismaService } from "../database/prisma.service.js";
import { Metrics } from "../observability/metrics.js";
import { OPERATIONS } from "./operations.js";
import { type JobStatus, JOB_STATUSES, TERMINAL } from "./state/job-states.js";

/** Every status a job is still in on its way to a terminal one. */
const WAITING = JOB_STATUSES.filter((status): status is JobStatus => !TERMINAL.includes(status));

interface Row {
  operation: string;
  status: string;
  n: number;
  oldest: number | null;
}

/**
 * Queue depth and the age of the oldest due job per operation, read from Postgres (the record of
 * the work, whatever Redis holds) when /metrics is scraped: one indexed query per scrape.
 */
@Injectable()
export class JobGauges {
  private scrape: Promise<Row[] | undefined> | undefined;

  constructor(
    metrics: Metrics,
    private readonly prisma: PrismaService,
  ) {
    const rows = () =>
      (this.scrape ??= this.read().finally(() => setTimeout(() => (this.scrape = undefined), 1000)));
    new Gauge({
      name: "leadgate_jobs_waiting",
      help: "Jobs not finished, by operation and status (queued, retrying, running, waiting, held, blocked).",
      labelNames: ["operation", "status"] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        const counts = await rows();
        if (!counts) return; // no reading: no samples (an alert on absence fires), never a false 0
        for (const operation of OPERATIONS) {
          for (const status of WAITING) {
            const n = counts.find((row) => row.operation === operation && row.status === status)?.n ?? 0;
            this.set({ operation, status }, n);
          }
        }
      },
    });
    new Gauge({
      name: "leadgate_job_oldest_due_seconds",
      help: "Age of the oldest queued or retrying job that is due, by operation (0: none due). Alert when it grows.",
      labelNames: ["operation"] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        const counts = await rows();
        if (!counts) return;
        for (const operation of OPERATIONS) {
          const ages = counts.filter((row) => row.operation === operation).map((row) => row.oldest ?? 0);
          this.set({ operation }, Math.max(0, ...ages));
        }
      },
    });
    const openCircuits = () =>
      this.prisma.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM destination_circuits WHERE state <> 'closed'",
      );
    new Gauge({
      name: "leadgate_destination_circuits_open",
      help: "Destinations (CRM origins) whose circuit is open or half-open: their jobs wait for a probe. A count, not one series per origin (origins are tenant-set). Which ones: destination_circuits in Postgres.",
      registers: [metrics.registry],
      async collect() {
        this.reset();
        try {
          const { rows } = await openCircuits();
          this.set(rows[0]?.n ?? 0);
        } catch {
          // the database is down: no sample this scrape, never a false 0
        }
      },
    });
  }

  private async read(): Promise<Row[] | undefined> {
    try {
      const { rows } = await this.prisma.pool.query<Row>(
        `SELECT operation, status, count(*)::int AS n,
                extract(epoch FROM now() - min(next_attempt_at)
                  FILTER (WHERE status IN ('queued', 'retrying') AND next_attempt_at <= now()))::float AS oldest
         FROM jobs WHERE status = ANY($1::text[]) GROUP BY operation, status`,
        [WAITING],
      );
      return rows;
    } catch {
      return undefined; // the database is down: readiness says so; these gauges have no samples this scrape
    }
  }
}
