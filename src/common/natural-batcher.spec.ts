import { BatcherFull, NaturalBatcher } from "./natural-batcher.js";

/**
 * A `run` whose batches end when the test says so. Like a query through pg-pool, it sends its batch
 * from a `process.nextTick` (the pool hands out an idle connection there): `batches` records each
 * batch when it is sent.
 */
function controlledRun() {
  const batches: number[][] = [];
  const ends: ((results: string[] | Error) => void)[] = [];
  const run = (items: number[]) =>
    new Promise<string[]>((resolve, reject) =>
      process.nextTick(() => {
        batches.push(items);
        ends.push((results) => (results instanceof Error ? reject(results) : resolve(results)));
      }),
    );
  return { run, batches, ends };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("NaturalBatcher", () => {
  it("sends what waited behind the batch in flight as the next batch, and answers each item its own result", async () => {
    const { run, batches, ends } = controlledRun();
    const batcher = new NaturalBatcher<number, string>(run, { maxBatch: 10 });
    const first = batcher.submit(1);
    const later = [2, 3, 4].map((item) => batcher.submit(item));
    await tick();
    expect(batches).toEqual([[1]]);
    ends[0]!(["one"]);
    await expect(first).resolves.toBe("one");
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    ends[1]!(["two", "three", "four"]);
    await expect(Promise.all(later)).resolves.toEqual(["two", "three", "four"]);
  });

  it("sends the next batch before the finished batch's callers continue", async () => {
    const { run, batches, ends } = controlledRun();
    const batcher = new NaturalBatcher<number, string>(run, { maxBatch: 10 });
    const seen: string[] = [];
    const first = batcher.submit(1).then((result) => {
      seen.push(`caller saw ${result}; batches sent: ${batches.length}`);
    });
    void batcher.submit(2);
    await tick();
    ends[0]!(["one"]);
    await first;
    expect(seen).toEqual(["caller saw one; batches sent: 2"]);
  });

  it("rejects every item of a batch whose run fails, and goes on with the next batch", async () => {
    const { run, ends } = controlledRun();
    const batcher = new NaturalBatcher<number, string>(run, { maxBatch: 10 });
    const first = batcher.submit(1);
    const second = batcher.submit(2);
    await tick();
    ends[0]!(new Error("refused"));
    await expect(first).rejects.toThrow("refused");
    await tick();
    ends[1]!(["two"]);
    await expect(second).resolves.toBe("two");
  });

  it("rejects a batch whose run throws before it returns a promise", async () => {
    const batcher = new NaturalBatcher<number, string>(
      () => {
        throw new Error("no connection");
      },
      { maxBatch: 10 },
    );
    await expect(batcher.submit(1)).rejects.toThrow("no connection");
  });

  it("refuses at once beyond maxWaiting, and holds back what admit refuses for a later batch", async () => {
    const { run, batches, ends } = controlledRun();
    const batcher = new NaturalBatcher<number, string>(run, {
      maxBatch: 10,
      maxWaiting: 3,
      admit: () => {
        const seen = new Set<number>();
        return (item) => !seen.has(item) && Boolean(seen.add(item));
      },
    });
    const answers = [batcher.submit(7), batcher.submit(8), batcher.submit(8), batcher.submit(9)];
    await expect(batcher.submit(10)).rejects.toBeInstanceOf(BatcherFull);
    await tick();
    ends[0]!(["seven"]);
    await tick();
    expect(batches).toEqual([[7], [8, 9]]);
    ends[1]!(["eight", "nine"]);
    await tick();
    expect(batches).toEqual([[7], [8, 9], [8]]);
    ends[2]!(["eight again"]);
    await expect(Promise.all(answers)).resolves.toEqual(["seven", "eight", "eight again", "nine"]);
  });
});
