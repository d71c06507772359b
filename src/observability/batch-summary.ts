/**
 * Batches' counts as one log line per interval at most. At low load each batch is a line of its
 * own, written at once: the first batch after a quiet interval is. Under load the batches that
 * follow within `intervalMs` of the last line are added up and written when the interval ends:
 * `batches`, each count summed, and `ms`, the slowest batch's. A line per batch of deliveries was
 * 300 lines a second at full ingest and cost 4 % of its throughput (docs/benchmarks.md).
 * `flush` writes what is pending now (at shutdown).
 */
export class BatchSummary {
  private pending: Record<string, number> | undefined;
  private lastWritten = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (summary: Record<string, number>) => void,
    private readonly intervalMs = 1_000,
  ) {}

  add(counts: Record<string, number>, ms: number): void {
    const pending = (this.pending ??= { batches: 0 });
    pending.batches! += 1;
    for (const [field, count] of Object.entries(counts)) pending[field] = (pending[field] ?? 0) + count;
    pending.ms = Math.max(pending.ms ?? 0, ms);
    if (this.timer) return;
    const wait = this.lastWritten + this.intervalMs - performance.now();
    if (wait <= 0) return this.flush();
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref(); // a pending line never keeps a process alive; shutdown flushes it
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const summary = this.pending;
    this.pending = undefined;
    this.lastWritten = performance.now();
    this.write(summary);
  }
}
