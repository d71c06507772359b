// initial-response: the first automatic reply to a lead, once per lead (the job is keyed by lead).
// A local record is written before the call; when an earlier attempt's outcome is unknown (it timed
// out, or the worker died), the provider is searched for our message before sending again.
import { Injectable } from "@nestjs/common";
import { ThumbtackClient } from "../../providers/thumbtack/thumbtack.client.js";
import { YelpClient } from "../../providers/yelp/yelp.client.js";
import type { YelpEvent } from "../../providers/yelp/yelp.schemas.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";
import { SideEffectsRepository } from "../side-effects.repository.js";

const isOurs = (event: YelpEvent) => event.user_type === "BIZ" || event.channel === "API-SELF";
/** Providers may store our text with other line endings or surrounding space. */
const sameText = (a: string | null | undefined, b: string) =>
  typeof a === "string" && a.replace(/\r\n/g, "\n").trim() === b.replace(/\r\n/g, "\n").trim();
const textOf = (event: YelpEvent) => event.event_content?.text ?? event.event_content?.fallback_text;

@Injectable()
export class InitialResponseProcessor implements Processor {
  readonly operation = "initial-response" as const;

  constructor(
    private readonly sideEffects: SideEffectsRepository,
    private readonly yelp: YelpClient,
    private readonly thumbtack: ThumbtackClient,
  ) {}

  async run({ job, receipt, connection }: JobContext): Promise<void> {
    const reply = connection.settings.autoResponse;
    if (!reply?.enabled || !reply.text) return; // turned off after the event arrived
    const { earlier } = await this.sideEffects.begin(job);
    if (earlier === "succeeded" || earlier === "skipped") return;
    const outcomeUnknown = earlier === "started";
    const token = connection.accessToken;

    switch (receipt.provider) {
      case "yelp": {
        const events = await this.yelp.getEvents(token, receipt.leadId);
        if (outcomeUnknown && events.some((event) => isOurs(event) && sameText(textOf(event), reply.text))) {
          return this.sideEffects.finish(job, "succeeded", "reconciled");
        }
        const newest = [...events].sort((a, b) =>
          (b.time_created ?? "").localeCompare(a.time_created ?? ""),
        )[0];
        // Never answer our own (or the business's) message: that is how auto-responders loop.
        if (!newest || isOurs(newest)) return this.sideEffects.finish(job, "skipped", "latest_event_is_ours");
        await this.yelp.postText(token, receipt.leadId, reply.text);
        return this.sideEffects.finish(job, "succeeded");
      }
      case "thumbtack": {
        if (outcomeUnknown) {
          const messages = await this.thumbtack.getMessages(token, receipt.leadId);
          if (messages.some((message) => message.from === "Business" && sameText(message.text, reply.text))) {
            return this.sideEffects.finish(job, "succeeded", "reconciled");
          }
        }
        await this.thumbtack.postMessage(token, receipt.leadId, reply.text);
        return this.sideEffects.finish(job, "succeeded");
      }
      case "staticforms":
        return this.sideEffects.finish(job, "skipped", "no_reply_channel");
    }
  }
}
