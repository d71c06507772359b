import { setTimeout as sleep } from "node:timers/promises";
import { BatchSummary } from "./batch-summary.js";

describe("BatchSummary", () => {
  const lines: Record<string, number>[] = [];
  const summary = new BatchSummary((line) => lines.push(line), 200);
  afterEach(() => {
    summary.flush();
    lines.length = 0;
  });

  it("writes the first batch at once, and sums the batches of the interval after it into one line at its end", async () => {
    summary.add({ deliveries: 3, stored: 2 }, 4.5);
    expect(lines).toEqual([{ batches: 1, deliveries: 3, stored: 2, ms: 4.5 }]);
    summary.add({ deliveries: 2, stored: 0 }, 9);
    summary.add({ deliveries: 5, stored: 5 }, 3);
    expect(lines).toHaveLength(1);
    await sleep(300);
    expect(lines).toEqual([
      { batches: 1, deliveries: 3, stored: 2, ms: 4.5 },
      { batches: 2, deliveries: 7, stored: 5, ms: 9 },
    ]);
  });

  it("writes a batch at once again after a quiet interval, and what is pending when flushed", async () => {
    await sleep(250);
    summary.add({ deliveries: 1 }, 1);
    summary.add({ deliveries: 4 }, 2);
    expect(lines).toEqual([{ batches: 1, deliveries: 1, ms: 1 }]);
    summary.flush();
    expect(lines).toEqual([
      { batches: 1, deliveries: 1, ms: 1 },
      { batches: 1, deliveries: 4, ms: 2 },
    ]);
    summary.flush();
    expect(lines).toHaveLength(2);
  });
});
