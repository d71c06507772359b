import { QUEUE_NAMES, unconsumed } from "./queue-names.js";

describe("queue vocabulary", () => {
  it("names no queue when every queue has a worker", () => {
    expect(unconsumed([...QUEUE_NAMES])).toEqual([]);
  });

  it("names the queues without a worker (the worker process then fails its boot)", () => {
    expect(
      unconsumed(["lead-upsert", "crm-delivery", "reconciliation", "notification", "retention"]),
    ).toEqual(["initial-response", "provider-sync", "provider-mark-replied", "replay-batch"]);
  });
});
