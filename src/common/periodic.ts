/**
 * A worker's periodic task: `work` runs every `everyMs`, never two runs at once (a tick that comes
 * while one runs is skipped), and `stop` clears the timer and waits for the run in flight, so a
 * shutdown leaves nothing half done. `work` handles its own failures (the next tick retries).
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly work: () => Promise<unknown>) {}

  start(everyMs: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.work().finally(() => (this.running = undefined));
    }, everyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
