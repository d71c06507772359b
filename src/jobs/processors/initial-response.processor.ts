// initial-response: the first automatic reply to a lead, once per lead (the job is keyed by lead).
// A local record is written before the call; when an earlier attempt's outcome is unknown (it timed
// out, or the worker died), the provider's rules look for our message before sending again.
import { Injectable } from "@nestjs/common";
import { FollowUpRegistry } from "../../providers/follow-up-registry.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";
import { SideEffectsRepository } from "../side-effects.repository.js";

@Injectable()
export class InitialResponseProcessor implements Processor {
  readonly operation = "initial-response" as const;

  constructor(
    private readonly sideEffects: SideEffectsRepository,
    private readonly followUps: FollowUpRegistry,
  ) {}

  needsCredentials({ receipt }: JobContext): boolean {
    return this.followUps.get(receipt.provider).needsCredentials.reply;
  }

  async run({ job, receipt, connection }: JobContext): Promise<void> {
    const reply = connection.settings.autoResponse;
    if (!reply?.enabled || !reply.text) return; // turned off after the event arrived
    const { earlier } = await this.sideEffects.begin(job);
    if (earlier === "succeeded" || earlier === "skipped") return;
    const outcome = await this.followUps.get(receipt.provider).reply({
      leadId: receipt.leadId,
      text: reply.text,
      token: connection.accessToken,
      outcomeUnknown: earlier === "started",
    });
    await this.sideEffects.finish(job, outcome.status, outcome.ref);
  }
}
