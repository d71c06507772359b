// Business hours (api.md "First replies"): an IANA time zone and ranges per weekday, in local time.
// A range is turned into the two instants its wall times name on that local date (luxon's tz data),
// so a DST day's ranges last what the clock on the wall says: 01:00–04:00 lasts 2 hours on the
// spring-forward day and 4 on the fall-back day.
import { IANAZone } from "luxon";

export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `"HH:MM"` local times; a range is `[start, end)`, `"24:00"` may end one; a missing day is closed. */
export interface BusinessHours {
  timezone: string;
  weekly: Partial<Record<Weekday, [string, string][]>>;
}

/** What is wrong with hours as given (an unknown zone or weekday, a bad, reversed or overlapping range). */
export interface BusinessHoursError {
  /** The path below `businessHours`, e.g. `weekly.mon[1]` or `timezone`. */
  field: string;
  message: string;
}

/** `undefined` when `value` is valid hours; else the first problem, `field` "" for the value itself. */
export function checkBusinessHours(value: unknown): BusinessHoursError | undefined {
  if (!isRecord(value)) return { field: "", message: "must be an object { timezone, weekly }" };
  const extra = Object.keys(value).find((key) => key !== "timezone" && key !== "weekly");
  if (extra !== undefined) return { field: extra, message: "unknown field (allowed: timezone, weekly)" };
  const { timezone, weekly } = value;
  if (timezone === undefined) return { field: "timezone", message: "required: an IANA time zone" };
  // Intl (hence luxon) of newer Node versions also takes offsets like "+05:30": a zone name starts with a letter.
  if (typeof timezone !== "string" || !/^[A-Za-z]/.test(timezone) || !IANAZone.isValidZone(timezone))
    return {
      field: "timezone",
      message: `${JSON.stringify(timezone)} is not an IANA time zone (e.g. "America/New_York")`,
    };
  if (!isRecord(weekly)) return { field: "weekly", message: "must be an object of weekdays (mon … sun)" };
  for (const [day, ranges] of Object.entries(weekly)) {
    const field = `weekly.${day}`;
    if (!(WEEKDAYS as readonly string[]).includes(day))
      return { field, message: `unknown weekday (known: ${WEEKDAYS.join(", ")})` };
    if (!Array.isArray(ranges))
      return { field, message: 'must be a list of ranges like [["08:00", "18:00"]]' };
    const error = checkDay(field, ranges);
    if (error) return error;
  }
  return undefined;
}

/** Whether `at` falls inside the hours; no hours (undefined or null) means always open. */
export function isOpen(hours: BusinessHours | null | undefined, at: Date): boolean {
  if (!hours) return true;
  const zone = IANAZone.create(hours.timezone);
  const t = at.getTime();
  return rangesOf(hours, zone, localDate(zone, t)).some(([start, end]) => start <= t && t < end);
}

/** Seconds between `from` and `to` that fall inside the hours (no hours: all of them); 0 if to <= from. */
export function businessSeconds(hours: BusinessHours | null | undefined, from: Date, to: Date): number {
  const [start, end] = [from.getTime(), to.getTime()];
  if (end <= start) return 0;
  if (!hours) return (end - start) / 1000;
  const zone = IANAZone.create(hours.timezone);
  let ms = 0;
  // One local date at a time: linear in the days of the span.
  const last = localDate(zone, end);
  for (let date = localDate(zone, start); date <= last; date += DAY_MS) {
    for (const [open, close] of rangesOf(hours, zone, date)) {
      ms += Math.max(0, Math.min(close, end) - Math.max(open, start));
    }
  }
  return ms / 1000;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3));

function checkDay(day: string, ranges: unknown[]): BusinessHoursError | undefined {
  const seen: [number, number][] = [];
  for (const [i, range] of ranges.entries()) {
    const field = `${day}[${i}]`;
    if (!Array.isArray(range) || range.length !== 2 || !range.every((t) => typeof t === "string"))
      return { field, message: 'must be a pair of times like ["08:00", "18:00"]' };
    const [start, end] = range as [string, string];
    if (!TIME.test(start))
      return { field, message: `start ${JSON.stringify(start)} is not a time HH:MM from 00:00 to 23:59` };
    if (!TIME.test(end) && end !== "24:00")
      return { field, message: `end ${JSON.stringify(end)} is not a time HH:MM from 00:01 to 24:00` };
    const [from, to] = [minutesOf(start), minutesOf(end)];
    if (from >= to) return { field, message: `must start before its end (${start}–${end})` };
    const other = seen.findIndex(([a, b]) => from < b && a < to);
    if (other !== -1) return { field, message: `overlaps ${day}[${other}]` };
    seen.push([from, to]);
  }
  return undefined;
}

/** The local calendar date of instant `t`, as the UTC midnight of that date (pure calendar arithmetic). */
function localDate(zone: IANAZone, t: number): number {
  const wall = t + zone.offset(t) * MINUTE_MS;
  return Math.floor(wall / DAY_MS) * DAY_MS;
}

/** The day's ranges as [start, end) instants; `date` as from localDate. */
function rangesOf(hours: BusinessHours, zone: IANAZone, date: number): [number, number][] {
  const weekday = WEEKDAYS[(new Date(date).getUTCDay() + 6) % 7]!; // getUTCDay: 0 = Sunday
  return (hours.weekly[weekday] ?? []).map(([start, end]) => [
    instantOf(zone, date + minutesOf(start) * MINUTE_MS),
    instantOf(zone, date + minutesOf(end) * MINUTE_MS), // "24:00" is the next date's 00:00
  ]);
}

/** Wall time ⇒ instant, by zone: the speed-to-lead report asks for the same days over and over. */
const instants = new Map<string, number>();

function instantOf(zone: IANAZone, wall: number): number {
  const key = `${zone.name} ${wall}`;
  let instant = instants.get(key);
  if (instant === undefined) {
    instant = computeInstant(zone, wall);
    if (instants.size >= 100_000) instants.clear();
    instants.set(key, instant);
  }
  return instant;
}

/**
 * The instant a wall time (as UTC milliseconds) names in the zone. Repeated on a fall-back day: the
 * first (so 01:00–04:00 covers the repeated hour). Missing on a spring-forward day: the end of the
 * gap, when the clock jumps past it (02:30 ⇒ 03:00 EDT), so that later wall times are never earlier
 * instants. The offsets a day before and after bracket any DST change.
 */
function computeInstant(zone: IANAZone, wall: number): number {
  const before = zone.offset(wall - DAY_MS);
  const after = zone.offset(wall + DAY_MS);
  const fits = [before, after]
    .map((o) => wall - o * MINUTE_MS)
    .filter((t) => zone.offset(t) * MINUTE_MS === wall - t);
  if (fits.length > 0) return Math.min(...fits);
  // In the gap: `lo` still has the old offset, `hi` the new; find the change, to the minute.
  let [lo, hi] = [wall - after * MINUTE_MS, wall - before * MINUTE_MS];
  while (hi - lo > MINUTE_MS) {
    const mid = lo + Math.floor((hi - lo) / MINUTE_MS / 2) * MINUTE_MS;
    if (zone.offset(mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}
