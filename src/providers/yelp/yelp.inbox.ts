// Yelp after ingest: the webhook is only a trigger, so the lead and its events are fetched with the
// connection's token; the reply is a TEXT event, never sent once the business wrote.
import { Injectable } from "@nestjs/common";
import { firstTime, firstWord, parseTime, trimmedText } from "../envelope.js";
import type { JsonObject } from "../provider-event.js";
import {
  type Contact,
  type InboxEvent,
  isSameText,
  type LeadUpdate,
  type OurReply,
  type ProviderInbox,
  type ReplyOutcome,
  type ReplyRequest,
  type StoredHistory,
} from "../provider-inbox.js";
import { EVENTS_PAGE, YelpClient } from "./yelp.client.js";
import type { YelpEvent, YelpLead } from "./yelp.schemas.js";
import { earliestTime, isBusinessOwn, needsOurReply, yelpTextOf } from "./yelp.who-answered.js";

/** Lead fields kept on the lead as details. */
const DETAIL_FIELDS = [
  "conversation_id",
  "project",
  "time_created",
  "temporary_email_address_expiry",
] as const;

/** Sent by the business: by us through the API (`API-SELF`), or by a person at the business (`BIZ`). */
export const isOurs = (event: YelpEvent): boolean =>
  event.user_type === "BIZ" || event.channel === "API-SELF";
const textOf = yelpTextOf;

/**
 * Pages of events one run reads at most (20 events each: 200 events). A longer history is read by
 * the lead's next runs, each going on from the ends of the stored stretch of the list.
 */
export const MAX_EVENT_PAGES_PER_RUN = 10;

/**
 * Consent events (providers.md §1): `time` orders them, though never as later than the receipt
 * (LeadsRepository.recordPhoneConsent); the update carries no phone number.
 */
const PHONE_CONSENT = new Map([
  ["CONSUMER_PHONE_NUMBER_OPT_IN_EVENT", true],
  ["CONSUMER_PHONE_NUMBER_OPT_OUT_EVENT", false],
]);

/** Events read in one run: stretches of the list, oldest first, each placed against the stored ones. */
export interface YelpEventsRead {
  runs: { events: YelpEvent[]; after?: string; before?: string }[];
  /** The events read and stored reach back to the lead's first event. */
  complete: boolean;
}

/** The service asked for: the project's job names, joined with ", " (api.md "First replies"). */
function yelpService(project: JsonObject | null | undefined): string | undefined {
  const names = Array.isArray(project?.job_names) ? project.job_names : [];
  const texts = names.map(trimmedText).filter((name) => name !== undefined);
  return texts.length > 0 ? texts.join(", ") : undefined;
}

/**
 * The fetched lead and its events, as of the lead's last event (else the webhook's time); `ours`:
 * the first reply Leadgate sent, which tells our channel-less events from the business's.
 */
export function yelpLeadUpdate(
  lead: YelpLead,
  read: YelpEventsRead,
  event: Pick<InboxEvent, "occurredAt" | "payload">,
  ours: OurReply | null = null,
): LeadUpdate {
  const fallback = event.occurredAt.toISOString();
  const contact: Contact = {};
  const name = trimmedText(lead.user?.display_name);
  const email = trimmedText(lead.temporary_email_address);
  const phone = trimmedText(lead.phone_number) ?? trimmedText(lead.temporary_phone_number);
  if (name) contact.name = name;
  const firstName = firstWord(name);
  if (firstName) contact.firstName = firstName;
  if (email) contact.email = email;
  if (phone) contact.phone = phone;
  const details: JsonObject = {};
  for (const field of DETAIL_FIELDS) {
    const value = lead[field];
    if (value !== undefined) details[field] = value;
  }
  const type = event.payload?.event_type;
  const granted = typeof type === "string" ? PHONE_CONSENT.get(type) : undefined;
  const service = yelpService(lead.project);
  const providerCreatedAt = parseTime(lead.time_created);
  const businessAnsweredAt = earliestTime(
    read.runs.flatMap((run) => run.events),
    (item) => isBusinessOwn(item, ours),
  );
  return {
    ...(providerCreatedAt ? { providerCreatedAt } : {}),
    ...(businessAnsweredAt ? { businessAnsweredAt } : {}),
    profile: { contact, details, ...(service ? { service } : {}) },
    lastEventAt: firstTime(lead.last_event_time, fallback),
    messages: [],
    history: {
      runs: read.runs.map(({ events, after, before }) => ({
        messages: events.map((item) => ({
          externalId: item.id,
          cursor: item.cursor,
          direction: item.user_type === "BIZ" ? "outbound" : "inbound",
          author: item.user_display_name ?? null,
          text: textOf(item) ?? null,
          sentAt: firstTime(item.time_created, fallback),
        })),
        ...(after === undefined ? {} : { after }),
        ...(before === undefined ? {} : { before }),
      })),
      complete: read.complete,
    },
    ...(granted === undefined
      ? {}
      : { phoneConsent: { granted, at: event.occurredAt, ...(granted && phone ? { phone } : {}) } }),
  };
}

/**
 * Whether to send the first reply, given the lead's events: `reconciled` when an earlier attempt
 * whose outcome is unknown did send it; `business_already_replied` when the business wrote anywhere
 * in the history (us through the API, or a person at the business: answering again is how
 * auto-responders loop); `no_consumer_message` when there is no event at all; else `send`. Where in
 * the history does not matter, so neither the list order nor `time_created` can mislead it.
 */
export function yelpReplyDecision(
  events: YelpEvent[],
  text: string,
  outcomeUnknown: boolean,
): "send" | "reconciled" | "business_already_replied" | "no_consumer_message" {
  if (outcomeUnknown && events.some((event) => isOurs(event) && isSameText(textOf(event), text))) {
    return "reconciled";
  }
  if (events.length === 0) return "no_consumer_message";
  return events.some(isOurs) ? "business_already_replied" : "send";
}

@Injectable()
export class YelpInbox implements ProviderInbox {
  readonly provider = "yelp" as const;
  /** The webhook is only a trigger: the lead is fetched with the token, and the reply sent with it. */
  readonly needsCredentials = { leadUpdate: true, reply: true };

  constructor(private readonly client: YelpClient) {}

  async leadUpdate(
    event: InboxEvent,
    token: string | undefined,
    stored: () => Promise<StoredHistory | null>,
    ourReply: () => Promise<OurReply | null>,
  ): Promise<LeadUpdate> {
    const [lead, read] = await Promise.all([
      this.client.getLead(token, event.leadId),
      stored().then((history) => this.readEvents(token, event.leadId, history)),
    ]);
    // Our reply is read only when an event needs it to tell whose it is.
    const ours = read.runs.some((run) => run.events.some(needsOurReply)) ? await ourReply() : null;
    return yelpLeadUpdate(lead, read, event, ours);
  }

  /**
   * The events the stored list lacks, at most `MAX_EVENT_PAGES_PER_RUN` pages: with nothing stored,
   * the newest page and older ones; else the events newer than the newest stored, then (until the
   * first event was read) those older than the oldest stored. Each stretch read joins the stored
   * one, so what is stored stays one unbroken stretch of the list wherever the bound stops a run.
   */
  private async readEvents(
    token: string | undefined,
    leadId: string,
    stored: StoredHistory | null,
  ): Promise<YelpEventsRead> {
    let pages = 0;
    const page = (from: { olderThan?: string; newerThan?: string } = {}) => {
      pages += 1;
      return this.client.getEvents(token, leadId, from);
    };
    /** Pages back from `cursor` (or from the newest event) while there are more and the bound allows. */
    const older = async (cursor?: string) => {
      let last = await page(cursor === undefined ? {} : { olderThan: cursor });
      const events = [...last];
      while (last.length === EVENTS_PAGE && pages < MAX_EVENT_PAGES_PER_RUN) {
        last = await page({ olderThan: events[0]!.cursor });
        events.unshift(...last);
      }
      return { events, reachedFirst: last.length < EVENTS_PAGE };
    };
    if (!stored) {
      const { events, reachedFirst } = await older();
      return { runs: [{ events }], complete: reachedFirst };
    }
    const newer: YelpEvent[] = [];
    let last: YelpEvent[];
    do {
      last = await page({ newerThan: (newer.at(-1) ?? stored.newest).cursor });
      newer.push(...last);
    } while (last.length === EVENTS_PAGE && pages < MAX_EVENT_PAGES_PER_RUN);
    const runs: YelpEventsRead["runs"] = [{ events: newer, after: stored.newest.externalId }];
    if (stored.complete || pages >= MAX_EVENT_PAGES_PER_RUN) return { runs, complete: stored.complete };
    const { events, reachedFirst } = await older(stored.oldest.cursor);
    runs.push({ events, before: stored.oldest.externalId });
    return { runs, complete: reachedFirst };
  }

  async reply({ leadId, text, token, outcomeUnknown }: ReplyRequest): Promise<ReplyOutcome> {
    const events = await this.client.getEvents(token, leadId);
    const decision = yelpReplyDecision(events, text, outcomeUnknown);
    switch (decision) {
      case "reconciled":
        return { status: "succeeded", ref: "reconciled" };
      case "business_already_replied": {
        const answeredAt = earliestTime(events, isOurs);
        return { status: "skipped", ref: decision, ...(answeredAt ? { answeredAt } : {}) };
      }
      case "no_consumer_message":
        return { status: "skipped", ref: decision };
      case "send":
        await this.client.postText(token, leadId, text);
        return { status: "succeeded" };
    }
  }

  /** Yelp knows phone and e-mail replies only: anything else is told as a phone reply ([ASSUMPTION]). */
  markReplied({ leadId, token, via }: { leadId: string; token: string | undefined; via: string | null }) {
    return this.client.markAsReplied(token, leadId, via === "email" ? "EMAIL" : "PHONE");
  }
}
