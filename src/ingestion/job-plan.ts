// Which jobs an accepted event creates (design.md, "Jobs").
import { type Operation, OPERATION_SETTINGS, jobKey } from "../jobs/operations.js";
import { initialStatus } from "../jobs/state/job-states.js";
import type { ProviderEvent } from "../providers/provider-event.js";
import type { ConnectionSettings } from "../connections/lifecycle/connection.js";
import { leadScopeKey } from "./idempotency-key.js";

export interface PlannedJob {
  operation: Operation;
  jobKey: string;
  status: ReturnType<typeof initialStatus>;
  maxAttempts: number;
}

export function planJobs(
  event: ProviderEvent,
  receiptKey: string,
  settings: ConnectionSettings,
  paused: boolean,
): PlannedJob[] {
  if (event.kind === "ignored") return [];
  const job = (operation: Operation, scopeKey: string): PlannedJob => ({
    operation,
    jobKey: jobKey(operation, scopeKey),
    status: initialStatus(paused, OPERATION_SETTINGS[operation].after !== undefined),
    maxAttempts: OPERATION_SETTINGS[operation].attempts,
  });
  const jobs = [job("lead-upsert", receiptKey)];
  if (event.mayStartConversation && settings.autoResponse?.enabled === true) {
    jobs.push(job("initial-response", leadScopeKey(event))); // one per lead, however many events
  }
  if (settings.crmDestination?.url) jobs.push(job("crm-delivery", receiptKey));
  return jobs;
}
