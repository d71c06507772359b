// Which jobs an accepted event creates (docs/design.md, "Jobs").
import { type Operation, OPERATION_SETTINGS, jobKey } from "../jobs/operations.js";
import { initialStatus } from "../jobs/state/job-states.js";
import type { ProviderEvent } from "../providers/provider-event.js";
import type { ConnectionSettings } from "../connections/lifecycle/connection.js";
import { effectiveSettings, type ReplySettings } from "../replies/reply-settings.js";
import { leadScopeKey } from "./idempotency-key.js";

export interface PlannedJob {
  operation: Operation;
  jobKey: string;
  status: ReturnType<typeof initialStatus>;
  maxAttempts: number;
}

/** What the plan reads of a connection: its own settings and its client's and tenant's defaults (which it inherits). */
export interface PlanConnection {
  settings: ConnectionSettings;
  clientDefaults: ReplySettings | null;
  tenantDefaults: ReplySettings | null;
}

export function planJobs(
  event: ProviderEvent,
  receiptKey: string,
  connection: PlanConnection,
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
  const { settings } = connection;
  // The effective auto-response: the connection's own, else its client's, else its tenant's default (api.md "Clients").
  const autoResponse = effectiveSettings(settings, {
    client: connection.clientDefaults,
    tenant: connection.tenantDefaults,
  }).autoResponse;
  if (event.mayStartConversation && autoResponse?.enabled === true) {
    jobs.push(job("initial-response", leadScopeKey(event))); // one per lead, however many events
  }
  if (settings.crmDestination?.url) jobs.push(job("crm-delivery", receiptKey));
  return jobs;
}
