import type { Redis } from "ioredis";
import { loadConfig } from "../config/config.js";
import type { JobRunner } from "./job-runner.js";
import type { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import type { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import type { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { WorkerHost } from "./worker-host.js";

const config = loadConfig({
  DATABASE_URL: "postgresql://x@localhost/x",
  LEADGATE_ENCRYPTION_KEY: Buffer.alloc(32).toString("base64"),
});
const processor = <T>(operation: string) => ({ operation, run: () => Promise.resolve() }) as unknown as T;

describe("WorkerHost", () => {
  it("boots with one processor per operation", () => {
    expect(
      () =>
        new WorkerHost(
          {} as JobRunner,
          config,
          {} as Redis,
          processor<LeadUpsertProcessor>("lead-upsert"),
          processor<InitialResponseProcessor>("initial-response"),
          processor<CrmDeliveryProcessor>("crm-delivery"),
        ),
    ).not.toThrow();
  });

  it("fails the boot when an operation has no processor of its own", () => {
    expect(
      () =>
        new WorkerHost(
          {} as JobRunner,
          config,
          {} as Redis,
          processor<LeadUpsertProcessor>("lead-upsert"),
          processor<InitialResponseProcessor>("lead-upsert"),
          processor<CrmDeliveryProcessor>("crm-delivery"),
        ),
    ).toThrow(/no processor registered for operation\(s\): initial-response/);
  });
});
