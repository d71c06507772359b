// How many calls one process makes at once to one destination (DESTINATION_MAX_CONCURRENCY), so a
// slow destination cannot hold every slot of an operation's worker. A call over the cap waits a
// moment for a slot (a fast destination frees one within milliseconds); when none frees in time, or
// the calls in flight are already slow, the caller gives its worker slot back instead of holding it.
// (The same slots count the released jobs a worker runs itself, per operation: src/jobs/released-runs.ts.)

/** Gives the slot back. */
export type Release = () => void;

interface Destination {
  inFlight: number;
  /** When each call in flight started (a slot handed to a waiting call starts again). */
  started: Set<{ at: number }>;
  /** Calls waiting for a slot, first come first served. */
  waiting: ((release: Release) => void)[];
}

export class DestinationLimits {
  private readonly destinations = new Map<string, Destination>();

  /**
   * @param limit calls at once per destination
   * @param maxWaitMs how long a call over the cap waits for a slot before it gives up
   */
  constructor(
    private readonly limit: number,
    private readonly maxWaitMs: number,
  ) {}

  /**
   * A slot for a call to `origin`, or `undefined` when none freed within `maxWaitMs`, or at once
   * when every call in flight has run longer than that (the destination is slow: waiting is futile).
   */
  acquire(origin: string): Promise<Release | undefined> {
    const free = this.tryAcquire(origin);
    if (free) return Promise.resolve(free);
    const destination = this.destinations.get(origin)!;
    if (this.slowFor(origin) !== undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const take = (release: Release) => {
        clearTimeout(timer);
        resolve(release);
      };
      const timer = setTimeout(() => {
        destination.waiting.splice(destination.waiting.indexOf(take), 1);
        resolve(undefined);
      }, this.maxWaitMs);
      destination.waiting.push(take);
    });
  }

  /** A slot for a call to `origin` if one is free now, else undefined (no wait). */
  tryAcquire(origin: string): Release | undefined {
    const destination = this.destinations.get(origin) ?? { inFlight: 0, started: new Set(), waiting: [] };
    this.destinations.set(origin, destination);
    if (destination.inFlight >= this.limit) return undefined;
    destination.inFlight += 1;
    return this.releaser(origin, destination);
  }

  /**
   * When every slot of `origin` is taken by a call that has run longer than `maxWaitMs`: how long
   * the newest of them has run (a call now would wait at least about that long). Else undefined.
   */
  slowFor(origin: string): number | undefined {
    const destination = this.destinations.get(origin);
    if (!destination || destination.inFlight < this.limit) return undefined;
    const age = Date.now() - Math.max(...[...destination.started].map((call) => call.at));
    return age > this.maxWaitMs ? age : undefined;
  }

  /** Calls in flight to `origin` now. */
  inFlight(origin: string): number {
    return this.destinations.get(origin)?.inFlight ?? 0;
  }

  private releaser(origin: string, destination: Destination): Release {
    let released = false;
    const call = { at: Date.now() };
    destination.started.add(call);
    return () => {
      if (released) return;
      released = true;
      destination.started.delete(call);
      const next = destination.waiting.shift();
      // The slot passes straight to the next waiting call; the last one out forgets the destination.
      if (next) return next(this.releaser(origin, destination));
      destination.inFlight -= 1;
      if (destination.inFlight === 0) this.destinations.delete(origin);
    };
  }
}
