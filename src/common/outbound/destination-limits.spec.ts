import { atOnce } from "../../../test/support/wait.js";
import { DestinationLimits } from "./destination-limits.js";

const A = "https://a.example";
const B = "https://b.example";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("DestinationLimits", () => {
  it("grants `limit` calls at once per destination; other destinations are not affected", async () => {
    const limits = new DestinationLimits(2, 50);
    expect(await limits.acquire(A)).toBeDefined();
    expect(await limits.acquire(A)).toBeDefined();
    expect(await limits.acquire(B)).toBeDefined();
    expect(limits.inFlight(A)).toBe(2);
    expect(await limits.acquire(A)).toBeUndefined(); // no slot freed within 50 ms
  });

  it("hands a freed slot to the call waiting for it", async () => {
    const limits = new DestinationLimits(1, 500);
    const first = await limits.acquire(A);
    const second = limits.acquire(A);
    first!();
    const release = await second;
    expect(release).toBeDefined();
    expect(limits.inFlight(A)).toBe(1);
    release!();
    release!(); // twice is once
    expect(limits.inFlight(A)).toBe(0);
  });

  it("does not wait when even the newest call in flight is older than the wait (a slow destination)", async () => {
    const limits = new DestinationLimits(1, 30);
    await limits.acquire(A);
    await sleep(40);
    expect(await atOnce(limits.acquire(A))).toBeUndefined(); // not after a wait of its own
  });

  it("tryAcquire takes a free slot or answers undefined at once, leaving waiting calls first", async () => {
    const limits = new DestinationLimits(1, 500);
    const first = limits.tryAcquire(A);
    expect(first).toBeDefined();
    expect(limits.tryAcquire(A)).toBeUndefined(); // synchronous: it never waits
    const waiting = limits.acquire(A);
    first!();
    expect(await waiting).toBeDefined(); // the freed slot went to the waiting call
    expect(limits.tryAcquire(A)).toBeUndefined();
    expect(limits.inFlight(A)).toBe(1);
  });
});
