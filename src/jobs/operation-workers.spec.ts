import { OPERATION_WORKERS } from "./operation-workers.js";
import { OPERATIONS } from "./operations.js";

const processor = (operation: string) => ({ operation, run: () => Promise.resolve() });
const runner = { register: () => undefined };

describe("operation workers", () => {
  it("boots with one processor per operation", () => {
    for (const operation of OPERATIONS)
      expect(() => new OPERATION_WORKERS[operation](runner, processor(operation))).not.toThrow();
  });

  it("fails the boot when an operation has no processor of its own", () => {
    expect(() => new OPERATION_WORKERS["initial-response"](runner, processor("lead-upsert"))).toThrow(
      /no processor registered for operation\(s\): initial-response/,
    );
  });
});
