// initial-response: the first automatic reply to a lead, once per lead (the job is keyed by lead),
// after the lead's first event's lead-upsert (OPERATION_SETTINGS.after), so the template renders the
// lead as stored (api.md "First replies").
// It first waits the connection's delaySeconds from the lead's arrival (`waitingFor: "delay"`, no
// attempt used), giving a person at the business the chance to answer first: the provider's rules
// read the lead's events or messages fresh before sending, and a business that answered gets nothing
// (`skipped`, `business_already_replied`).
// The text is rendered once and stored with the local record before the call; when an earlier
// attempt's outcome is unknown (it timed out, or the worker died), the provider's rules look for
// exactly that text before sending again, whatever the template or the hours say now.
import { Injectable } from "@nestjs/common";
import { WaitRequired } from "../../common/outbound/errors.js";
import { type FirstResponse, FirstResponses } from "../../leads/first-responses.js";
import { LeadsRepository } from "../../leads/leads.repository.js";
import type { ReplyOutcome } from "../../providers/provider-inbox.js";
import { mergeValues } from "../../replies/merge-values.js";
import { type PlannedReply, plannedReply } from "../../replies/reply-settings.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";
import { ReplyChannels } from "../reply-channels.js";
import { SideEffectsRepository } from "../side-effects.repository.js";

/**
 * The lead's first response this reply tells of: ours once sent (now, or found sent by an earlier
 * attempt: `at` is the start of this attempt, Yelp and Thumbtack answer no message time), the
 * business's when it had answered first (at its message's time, where the provider gave one, else
 * this attempt's start).
 */
export function firstResponseOf(outcome: ReplyOutcome, attemptStartedAt: Date): FirstResponse | undefined {
  if (outcome.status === "succeeded") return { at: attemptStartedAt, by: "auto" };
  // Undated messages: the business answered before this attempt looked.
  if (outcome.ref === "business_already_replied") {
    return { at: outcome.answeredAt ?? attemptStartedAt, by: "business" };
  }
  return undefined;
}

/** A lead its lead-upsert did not store (it cannot be: the reply runs after it): every fallback applies. */
const NO_FIELDS = { firstName: null, name: null, service: null };

@Injectable()
export class InitialResponseProcessor implements Processor {
  readonly operation = "initial-response" as const;

  constructor(
    private readonly sideEffects: SideEffectsRepository,
    private readonly channels: ReplyChannels,
    private readonly leads: LeadsRepository,
    private readonly firstResponses: FirstResponses,
  ) {}

  needsCredentials({ receipt }: JobContext): boolean {
    return this.channels.for(receipt.provider)?.needsCredentials(receipt.provider) ?? false;
  }

  async run({ job, receipt, connection }: JobContext): Promise<void> {
    const { autoResponse, businessHours } = connection.replies;
    if (!autoResponse?.enabled || !autoResponse.text) return; // turned off after the event arrived
    const sendAt = new Date(receipt.receivedAt.getTime() + (autoResponse.delaySeconds ?? 0) * 1000);
    if (sendAt.getTime() > Date.now()) throw new WaitRequired("delay", sendAt);
    const key = { tenantId: connection.tenantId, provider: receipt.provider, externalLeadId: receipt.leadId };
    const lead = await this.leads.replyFields(key);
    const planned = plannedReply(
      autoResponse,
      businessHours,
      mergeValues(lead ?? NO_FIELDS, connection),
      new Date(),
    );
    const { earlier, request } = await this.sideEffects.begin<PlannedReply>(job, planned);
    if (earlier === "succeeded" || earlier === "skipped") return;
    const channel = this.channels.for(receipt.provider);
    const outcome: ReplyOutcome = channel
      ? await channel.send(
          { provider: receipt.provider, leadId: receipt.leadId, token: connection.accessToken },
          request?.text ?? planned.text,
          earlier === "started",
        )
      : { status: "skipped", ref: "no_reply_channel" };
    // The first response is recorded before the record is finished: a worker dying between the two
    // leaves the record `started`, and the retry reconciles and records it again (only ever earlier).
    const response = firstResponseOf(outcome, job.startedAt);
    if (response && lead) {
      await this.firstResponses.record(connection.tenantId, lead.id, response, businessHours);
    }
    await this.sideEffects.finish(job, outcome.status, outcome.ref);
  }
}
