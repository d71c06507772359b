import type { INestApplicationContext } from "@nestjs/common";
import { Queues } from "../../src/queues/queues.js";
import { waitFor } from "./wait.js";

/**
 * Resolves once the worker's own retention pass, which runs at once at boot with the real clock,
 * has finished (its next run is an hour away): were it still running when a test back-dates rows or
 * creates old months, it would purge or drop them first, or the two passes would wait on each
 * other's locks. Call it in a beforeAll.
 */
export function bootRetentionPassDone(worker: INestApplicationContext): Promise<unknown> {
  const queue = worker.get(Queues).get("retention");
  return waitFor(
    () => queue.getJobCounts("active", "waiting", "delayed"),
    (counts) => !counts.active && !counts.waiting && (counts.delayed ?? 0) >= 1,
    25_000, // inside a hook's own 30 s, so this error is the one reported
  );
}
