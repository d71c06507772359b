/**
 * At most `limit` tasks run at once; the others wait their turn, first come first served. A task's
 * slot passes straight to the first waiter when it ends, so a newcomer never overtakes the queue.
 */
export class Semaphore {
  private taken = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`a semaphore needs a limit of 1 or more, not ${limit}`);
  }

  /** Slots taken now (at most `limit`). */
  get running(): number {
    return this.taken;
  }

  /** Tasks waiting for a slot now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Runs `task` in a slot, once one is free; the slot is given back however the task ends. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.taken < this.limit) {
      this.taken += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.taken -= 1;
  }
}
