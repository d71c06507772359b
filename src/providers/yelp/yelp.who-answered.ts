// Who answered a Yelp lead (api.md "Who answered"): Leadgate's own reply, or the business itself.
import { parseTime } from "../envelope.js";
import { isSameText, type OurReply } from "../provider-inbox.js";
import type { YelpEvent } from "./yelp.schemas.js";

/** How long before a channel-less `BIZ` event Leadgate's reply of the same text may have been sent. */
export const OWN_REPLY_WINDOW_MS = 10 * 60_000;
/**
 * Yelp's clock and ours differ, and our reply is recorded just before the call: an event stamped
 * this much before the record can still be ours.
 */
const CLOCK_SLACK_MS = 60_000;

export const yelpTextOf = (event: YelpEvent) =>
  event.event_content?.text ?? event.event_content?.fallback_text;

/**
 * Did the business write this event itself? A `BIZ` event is Leadgate's own when its channel is
 * `API-SELF`, or, when Yelp sends no channel, when its text equals the reply Leadgate sent within
 * 10 minutes before it; every other `BIZ` event is the business's.
 */
export function isBusinessOwn(event: YelpEvent, ours: OurReply | null): boolean {
  if (event.user_type !== "BIZ" || event.channel === "API-SELF") return false;
  if (event.channel || !ours || !isSameText(yelpTextOf(event), ours.text)) return true;
  const at = parseTime(event.time_created);
  if (!at) return false; // our text, undated: assume ours rather than invent a business answer
  const after = at.getTime() - ours.at.getTime();
  return after < -CLOCK_SLACK_MS || after > OWN_REPLY_WINDOW_MS;
}

/** The earliest time among the events for which `counts` holds (those Yelp dates). */
export function earliestTime(events: YelpEvent[], counts: (event: YelpEvent) => boolean): Date | undefined {
  let earliest: Date | undefined;
  for (const event of events) {
    const at = counts(event) ? parseTime(event.time_created) : undefined;
    if (at && (!earliest || at < earliest)) earliest = at;
  }
  return earliest;
}

/** A `BIZ` event without a channel, which only our reply's text tells apart. */
export const needsOurReply = (event: YelpEvent): boolean => event.user_type === "BIZ" && !event.channel;
