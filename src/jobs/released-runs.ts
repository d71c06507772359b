// The jobs a worker runs itself, at once, outside any BullMQ slot (JobRunner.runHere): the jobs a
// success released (a CRM delivery after its lead-upsert), and the job outbox's jobs its dispatcher
// heard of at their commit. The job that released them gives its own slot back as soon as
// it succeeded, so a slow destination holds these runs, never the slots of the jobs that release
// them. At most an operation's concurrency of them run at once (as many as its BullMQ worker runs
// beside them). A release over that waits a moment for a slot (fast runs free one within
// milliseconds), and so does the dispatcher of a worker alone (with other workers, it does not wait:
// BullMQ spreads the jobs to them); when none frees in time, or the runs in flight are all slow, the
// jobs go to BullMQ.
import { DestinationLimits, type Release } from "../common/outbound/destination-limits.js";
import { type Operation, OPERATION_SETTINGS } from "./operations.js";

/** Slots taken for a release: call it to give them all back; `giveBack` returns some earlier. */
export type HeldSlots = Release & { giveBack(operations: readonly Operation[]): void };

export class ReleasedRuns {
  /** Each operation's slots, under the operation's name. */
  private readonly slots = new Map<Operation, DestinationLimits>();
  /** Slots taken and not given back yet: a success taking them may start its run after close began. */
  private taken = 0;
  private closing = false;
  private drained?: () => void;

  /**
   * `waitMs`: how long a release waits for a slot (RELEASED_RUN_WAIT_MS; DestinationLimits: not at
   * all when the runs in flight are all older). `onNoSlot`: told of each job that found every slot
   * of its operation taken (the worker's leadgate_released_runs_no_slot_total).
   */
  constructor(
    private readonly waitMs: number,
    private readonly onNoSlot: (operation: Operation) => void = () => undefined,
  ) {}

  /**
   * A slot for one released job of each of `operations` (a success releases at most one job per
   * operation: one per receipt), or undefined when one of them has none free in time or shutdown
   * began (with `wait: false`, when one has none free now). The caller gives them back once, when its run ended (start) or when it has none to run;
   * `giveBack` returns the slots of operations it turned out to have no job of (a lead-upsert
   * whose receipt has no first reply holds no initial-response slot while its CRM delivery runs).
   */
  async take(operations: readonly Operation[], { wait = true } = {}): Promise<HeldSlots | undefined> {
    const held = new Map<Operation, Release>();
    const giveBack = (which: readonly Operation[]) =>
      which.forEach((operation) => {
        held.get(operation)?.();
        held.delete(operation);
      });
    for (const operation of operations) {
      const slots = this.slotsOf(operation);
      const release = this.closing
        ? undefined
        : (slots.tryAcquire(operation) ?? (await this.noSlot(operation, wait)));
      if (!release) return void giveBack([...held.keys()]);
      held.set(operation, release);
    }
    if (this.closing) return void giveBack([...held.keys()]);
    this.taken += 1;
    let given = false;
    const all = () => {
      if (given) return;
      given = true;
      giveBack([...held.keys()]);
      this.taken -= 1;
      if (this.taken === 0) this.drained?.();
    };
    return Object.assign(all, { giveBack });
  }

  /** Every slot of `operation` is taken: waits for one (`wait`), or answers undefined at once. */
  private noSlot(operation: Operation, wait: boolean): Promise<Release | undefined> {
    this.onNoSlot(operation);
    return wait ? this.slotsOf(operation).acquire(operation) : Promise.resolve(undefined);
  }

  /** Runs `run` in the background (shutdown waits for it: it holds `slots`), then gives `slots` back. */
  start(run: () => Promise<void>, slots: Release, onError: (error: unknown) => void): void {
    void run().catch(onError).finally(slots);
  }

  /** Released jobs of `operation` running now. */
  count(operation: Operation): number {
    return this.slots.get(operation)?.inFlight(operation) ?? 0;
  }

  /**
   * Shutdown: takes no more runs (their jobs go to BullMQ) and waits until every slot taken is
   * given back: the runs in flight, and those of successes still being recorded, have ended.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.taken > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  private slotsOf(operation: Operation): DestinationLimits {
    let slots = this.slots.get(operation);
    if (!slots) {
      slots = new DestinationLimits(OPERATION_SETTINGS[operation].concurrency, this.waitMs);
      this.slots.set(operation, slots);
    }
    return slots;
  }
}
