import { atOnce } from "../../test/support/wait.js";
import { OPERATION_SETTINGS } from "./operations.js";
import { ReleasedRuns } from "./released-runs.js";

describe("ReleasedRuns", () => {
  const cap = OPERATION_SETTINGS["crm-delivery"].concurrency;
  const fill = (runs: ReleasedRuns) =>
    Promise.all(Array.from({ length: cap }, () => runs.take(["crm-delivery"])));

  it("gives up to the operation's concurrency of slots; one more waits for one given back, or gets none in time", async () => {
    const runs = new ReleasedRuns(500);
    const slots = await fill(runs);
    expect(slots.every((slot) => slot !== undefined)).toBe(true);
    expect(runs.count("crm-delivery")).toBe(cap);
    const waiting = runs.take(["crm-delivery"]);
    slots[0]?.();
    slots[0]?.(); // twice is once
    expect(await waiting).toBeDefined();
    expect(runs.count("crm-delivery")).toBe(cap);
    const started = Date.now();
    expect(await runs.take(["crm-delivery"])).toBeUndefined(); // none freed within 0.5 s
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it("tells of each job that found every slot taken, whether it then waits or not", async () => {
    const full: string[] = [];
    const runs = new ReleasedRuns(50, (operation) => full.push(operation));
    const slots = await fill(runs);
    expect(full).toEqual([]);
    expect(await runs.take(["crm-delivery"], { wait: false })).toBeUndefined();
    const waiting = runs.take(["crm-delivery"]);
    expect(full).toEqual(["crm-delivery", "crm-delivery"]); // told before it waits
    slots[0]?.();
    expect(await waiting).toBeDefined();
  });

  it("takes a slot of every operation or of none", async () => {
    const runs = new ReleasedRuns(500);
    const taken = await Promise.all(
      Array.from({ length: OPERATION_SETTINGS.notification.concurrency }, () => runs.take(["notification"])),
    );
    expect(taken.every((slot) => slot !== undefined)).toBe(true);
    expect(await runs.take(["crm-delivery", "notification"])).toBeUndefined();
    expect(runs.count("crm-delivery")).toBe(0);
  });

  it("giveBack returns the slots of operations without a job at once; the run keeps the others until its end", async () => {
    const runs = new ReleasedRuns(500);
    const firstReplies = OPERATION_SETTINGS["initial-response"].concurrency;
    const held = await Promise.all(
      Array.from({ length: firstReplies }, () => runs.take(["initial-response", "crm-delivery"])),
    );
    expect(runs.count("initial-response")).toBe(firstReplies);
    // None of these releases had a first reply: their initial-response slots are free again.
    held.forEach((slots) => slots?.giveBack(["initial-response"]));
    held[0]?.giveBack(["initial-response"]); // twice is once
    expect(runs.count("initial-response")).toBe(0);
    expect(runs.count("crm-delivery")).toBe(firstReplies);
    expect(await atOnce(runs.take(["initial-response", "crm-delivery"]))).toEqual(expect.any(Function)); // no wait for a slot
    held.forEach((slots) => slots?.());
    expect(runs.count("crm-delivery")).toBe(1);
  });

  it("gives a run's slots back when it ends, failed or not, and reports its failure", async () => {
    const runs = new ReleasedRuns(500);
    const errors: unknown[] = [];
    const ends: (() => void)[] = [];
    const run = (outcome: "resolve" | "reject") => () =>
      new Promise<void>((resolve, reject) =>
        ends.push(() => (outcome === "resolve" ? resolve() : reject(new Error("redis down")))),
      );
    runs.start(run("resolve"), (await runs.take(["crm-delivery"])) ?? fail(), (error) => errors.push(error));
    runs.start(run("reject"), (await runs.take(["crm-delivery"])) ?? fail(), (error) => errors.push(error));
    expect(runs.count("crm-delivery")).toBe(2);
    ends.forEach((end) => end());
    await runs.close();
    expect(runs.count("crm-delivery")).toBe(0);
    expect(errors).toEqual([new Error("redis down")]);
  });

  it("on close, gives no more slots and waits for the runs in flight", async () => {
    const runs = new ReleasedRuns(500);
    let finish = () => {};
    runs.start(
      () => new Promise<void>((resolve) => (finish = resolve)),
      (await runs.take(["crm-delivery"])) ?? fail(),
      () => {},
    );
    let closed = false;
    const closing = runs.close().then(() => (closed = true));
    expect(await runs.take(["crm-delivery"])).toBeUndefined();
    expect(runs.count("crm-delivery")).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(closed).toBe(true);
    expect(runs.count("crm-delivery")).toBe(0);
  });

  it("on close, waits for a run whose slots were taken before it began and that starts after", async () => {
    const runs = new ReleasedRuns(500);
    const slots = (await runs.take(["crm-delivery"])) ?? fail(); // its success is still being recorded
    let closed = false;
    const closing = runs.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    let finish = () => {};
    runs.start(
      () => new Promise<void>((resolve) => (finish = resolve)),
      slots,
      () => {},
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(runs.count("crm-delivery")).toBe(0);
  });
  it("without wait (the dispatcher's committed jobs), answers at once: a slot while one is free, then none", async () => {
    const runs = new ReleasedRuns(500);
    const slots = await Promise.all(
      Array.from({ length: cap }, () => runs.take(["crm-delivery"], { wait: false })),
    );
    expect(slots.every((slot) => slot !== undefined)).toBe(true);
    expect(await atOnce(runs.take(["crm-delivery"], { wait: false }))).toBeUndefined();
    slots[0]?.();
    expect(await runs.take(["crm-delivery"], { wait: false })).toBeDefined();
  });
});

function fail(): never {
  throw new Error("no slot");
}
