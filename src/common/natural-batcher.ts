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

  private async drain(): Promise<void> {
    this.inFlight++;
    try {
      while (this.waiting.length > 0) {
        const batch = this.take();
        try {
          const results = await this.run(batch.map((entry) => entry.item));
          batch.forEach((entry, index) => entry.resolve(results[index]!));
        } catch (error) {
          batch.forEach((entry) => entry.reject(error));
        }
      }
    } finally {
      this.inFlight--;
    }
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
