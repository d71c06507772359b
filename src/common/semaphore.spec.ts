import { Semaphore } from "./semaphore.js";

/** A task that runs until its `end` is called, recording how many ran at once. */
function gate() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { end, ended };
}

describe("Semaphore", () => {
  it("runs at most `limit` tasks at once; the others wait, first come first served", async () => {
    const slots = new Semaphore(2);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const gates = Array.from({ length: 5 }, gate);
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        running += 1;
        peak = Math.max(peak, running);
        await g.ended;
        running -= 1;
        return i;
      }),
    );
    await Promise.resolve();
    expect([started, slots.running, slots.waiting]).toEqual([[0, 1], 2, 3]);
    gates[1]!.end();
    await runs[1];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    // A newcomer queues behind the waiters, never overtakes them.
    const late = slots.run(() => {
      started.push(99);
      return Promise.resolve("late");
    });
    gates.forEach((g) => g.end());
    expect(await Promise.all([...runs, late])).toEqual([0, 1, 2, 3, 4, "late"]);
    expect(started).toEqual([0, 1, 2, 3, 4, 99]);
    expect([peak, slots.running, slots.waiting]).toEqual([2, 0, 0]);
  });

  it("gives the slot back when a task fails", async () => {
    const slots = new Semaphore(1);
    await expect(slots.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(slots.running).toBe(0);
    expect(await slots.run(() => Promise.resolve("next"))).toBe("next");
  });
});
