// How many calls one process makes at once to one destination (DESTINATION_MAX_CONCURRENCY), so a
// slow destination cannot hold every slot of an operation's worker. A call over the cap waits a
// moment for a slot (a fast destination frees one within milliseconds); when none frees in time,
// the destination is slow and the caller gives its worker slot back instead of holding it.

/** Gives the slot back. */
export type Release = () => void;

interface Destination {
  inFlight: number;
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

  /** A slot for a call to `origin`, or `undefined` when none freed within `maxWaitMs`. */
  acquire(origin: string): Promise<Release | undefined> {
    const destination = this.destinations.get(origin) ?? { inFlight: 0, waiting: [] };
    this.destinations.set(origin, destination);
    if (destination.inFlight < this.limit) {
      destination.inFlight += 1;
      return Promise.resolve(this.releaser(origin, destination));
    }
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

  /** Calls in flight to `origin` now. */
  inFlight(origin: string): number {
    return this.destinations.get(origin)?.inFlight ?? 0;
  }

  private releaser(origin: string, destination: Destination): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = destination.waiting.shift();
      // The slot passes straight to the next waiting call; the last one out forgets the destination.
      if (next) return next(this.releaser(origin, destination));
      destination.inFlight -= 1;
      if (destination.inFlight === 0) this.destinations.delete(origin);
    };
  }
}
