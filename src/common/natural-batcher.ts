/**
 * Natural batching: while one batch is in flight, new items wait; when it finishes, everything
 * that waited goes in the next batch. No timer, so nothing waits at low load, and under load the
 * cost of a round trip (and a commit) is shared by many items.
 *
 * `run` receives the items of one batch and returns one result per item, in order; if it throws,
 * every item of that batch is rejected with the error. `admit` may hold an item back for a later
 * batch (for example a second item with the same key, which one statement could not take twice).
 * `maxWaiting` bounds the items waiting behind the batch in flight: beyond it, `submit` rejects at
 * once with BatcherFull, so a stalled `run` cannot make the queue grow without bound.
 * `maxInFlight` (default 1) lets that many batches run at once (each takes what waits when it
 * starts): for a `run` whose batches are independent and that can use more than one connection.
 */
export class BatcherFull extends Error {
  constructor(readonly waiting: number) {
    super(`${waiting} items are already waiting`);
  }
}

export class NaturalBatcher<In, Out> {
  private waiting: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly options: {
      maxBatch: number;
      maxWaiting?: number;
      maxInFlight?: number;
      admit?: () => (item: In) => boolean;
    } = { maxBatch: 500 },
  ) {}

  submit(item: In): Promise<Out> {
    if (this.waiting.length >= (this.options.maxWaiting ?? Infinity)) {
      return Promise.reject(new BatcherFull(this.waiting.length));
    }
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.inFlight < (this.options.maxInFlight ?? 1)) void this.drain();
    });
  }

  /**
   * Runs batches while items wait. A finished batch's callers get their results only once the next
   * batch has started, in a tick queued after it: their continuations (a webhook's reply, a job's
   * next step) would otherwise run first, and a `run` that sends from a tick of its own (pg-pool
   * hands out an idle connection in `process.nextTick`) would wait for all of them. Measured on
   * the receipt writer: its statement went out 0.65–0.9 ms after the batch before it ended, now
   * 0.04–0.16 ms (docs/benchmarks.md).
   */
  private async drain(): Promise<void> {
    this.inFlight++;
    let settle: (() => void) | undefined;
    try {
      while (this.waiting.length > 0) {
        const batch = this.take();
        const running = this.start(batch.map((entry) => entry.item));
        if (settle) process.nextTick(settle);
        try {
          const results = await running;
          settle = () => batch.forEach((entry, index) => entry.resolve(results[index]!));
        } catch (error) {
          settle = () => batch.forEach((entry) => entry.reject(error));
        }
      }
    } finally {
      this.inFlight--;
      settle?.();
    }
  }

  /** `run`, called now (async: a synchronous throw becomes its batch's rejection). */
  private async start(items: In[]): Promise<Out[]> {
    return this.run(items);
  }

  private take(): typeof this.waiting {
    const admit = this.options.admit?.();
    const batch: typeof this.waiting = [];
    const later: typeof this.waiting = [];
    for (const entry of this.waiting) {
      if (batch.length < this.options.maxBatch && (admit === undefined || admit(entry.item)))
        batch.push(entry);
      else later.push(entry);
    }
    this.waiting = later;
    return batch;
  }
}
