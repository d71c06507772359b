import { Injectable } from "@nestjs/common";
import { Semaphore } from "../common/semaphore.js";
import { Metrics } from "../observability/metrics.js";

/** Password hashes and verifications one process runs at once (api.md: "at most 4 … others wait"). */
export const PASSWORD_SLOTS = 4;

/**
 * The process's argon2id work, PASSWORD_SLOTS at a time: each verification or hash takes 19 MiB and
 * tens of milliseconds of a core, so a burst of sign-ins (guesses, most of them) waits its turn
 * instead of taking the process's memory and CPU from everything else. What runs is visible at
 * /metrics: `leadgate_password_checks_running`, its maximum since start, and the waits.
 */
@Injectable()
export class PasswordSlots {
  private readonly slots = new Semaphore(PASSWORD_SLOTS);
  /** Work running now, counted inside the slot (what the gauges show). */
  private running = 0;
  private peak = 0;

  constructor(private readonly metrics: Metrics) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.slots.running >= PASSWORD_SLOTS) this.metrics.passwordChecksWaited.inc();
    return this.slots.run(async () => {
      this.running += 1;
      this.peak = Math.max(this.peak, this.running);
      this.metrics.passwordChecksRunning.set(this.running);
      this.metrics.passwordChecksPeak.set(this.peak);
      try {
        return await work();
      } finally {
        this.running -= 1;
        this.metrics.passwordChecksRunning.set(this.running);
      }
    });
  }
}
