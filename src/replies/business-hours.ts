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
/** Whether `name` is an IANA time zone. Intl (hence luxon) of newer Node versions also takes offsets like "+05:30": a zone name starts with a letter. */
export function isTimeZone(name: unknown): name is string {
  return typeof name === "string" && /^[A-Za-z]/.test(name) && IANAZone.isValidZone(name);
}

export function checkBusinessHours(value: unknown): BusinessHoursError | undefined {
  if (!isRecord(value)) return { field: "", message: "must be an object { timezone, weekly }" };
  const extra = Object.keys(value).find((key) => key !== "timezone" && key !== "weekly");
  if (extra !== undefined) return { field: extra, message: "unknown field (allowed: timezone, weekly)" };
  const { timezone, weekly } = value;
  if (timezone === undefined) return { field: "timezone", message: "required: an IANA time zone" };
  if (!isTimeZone(timezone))
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
  const clock = clockOf(hours.timezone);
  const t = at.getTime();
  return dayRanges(clock, weekOf(hours), localDate(clock.zone, t)).some(
    ([start, end]) => start <= t && t < end,
  );
}

/**
 * Seconds between `from` and `to` that fall inside the hours (no hours: all of them); 0 if to <= from.
 * In time proportional to the weeks of the span, never per day: the local days before the first and
 * after the last whole local week (Monday to Monday) are counted range by range; a whole week counts
 * the hours' weekly seconds, unless the zone's offset changes in it (a DST week), which is counted
 * range by range with the change's instant. Offsets are sampled once a week and kept per zone, so
 * the longest span (1970 to today) costs a few thousand additions once its weeks are known
 * (`npm run bench`: bench/business-hours.mjs).
 */
export function businessSeconds(hours: BusinessHours | null | undefined, from: Date, to: Date): number {
  const [start, end] = [from.getTime(), to.getTime()];
  if (end <= start) return 0;
  if (!hours) return (end - start) / 1000;
  const clock = clockOf(hours.timezone);
  const week = weekOf(hours);
  const [first, last] = [localDate(clock.zone, start), localDate(clock.zone, end)];
  // Whole weeks: Mondays after the first date, up to the last date's Monday.
  const firstWeek = Math.floor((first - MONDAY) / WEEK_MS) + 1;
  const lastWeek = Math.floor((last - MONDAY) / WEEK_MS);
  const within = (dates: [number, number]) => daysSeconds(clock, week, dates, start, end);
  if (lastWeek <= firstWeek) return within([first, last]) / 1000;
  let ms = within([first, mondayOf(firstWeek) - DAY_MS]) + within([mondayOf(lastWeek), last]);
  for (let k = firstWeek; k < lastWeek; k++) {
    ms +=
      changeIn(clock, k) === undefined
        ? week.openMs
        : daysSeconds(clock, week, [mondayOf(k), mondayOf(k + 1) - DAY_MS], -Infinity, Infinity);
  }
  return ms / 1000;
}

/**
 * Hours with each day's touching ranges merged (`["08:00","12:00"],["12:00","18:00"]` ⇒ one range)
 * and sorted: the form they are stored and counted in (api.md: at most 6 ranges a day, merged).
 */
export function mergedBusinessHours(hours: BusinessHours): BusinessHours {
  const weekly: BusinessHours["weekly"] = {};
  for (const day of WEEKDAYS) {
    const ranges = hours.weekly[day];
    if (ranges)
      weekly[day] = mergeRanges(ranges.map(([s, e]) => [minutesOf(s), minutesOf(e)])).map(([s, e]) => [
        hhmm(s),
        hhmm(e),
      ]);
  }
  return { timezone: hours.timezone, weekly };
}

export const MAX_RANGES_A_DAY = 6;

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
const MINUTE_MS = 60_000;
/** 1970-01-05, a Monday: local weeks are counted from it. */
const MONDAY = 4 * DAY_MS;
const TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3));
const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
const mondayOf = (week: number) => MONDAY + week * WEEK_MS;

/** Sorted, with touching or overlapping ranges joined. */
function mergeRanges(ranges: [number, number][]): [number, number][] {
  const merged: [number, number][] = [];
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const previous = merged.at(-1);
    if (previous && start <= previous[1]) previous[1] = Math.max(previous[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

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
  if (mergeRanges(seen).length > MAX_RANGES_A_DAY)
    return {
      field: day,
      message: `at most ${MAX_RANGES_A_DAY} ranges a day (touching ranges count as one): ${mergeRanges(seen).length} given`,
    };
  return undefined;
}

/** The local calendar date of instant `t`, as the UTC midnight of that date (pure calendar arithmetic). */
function localDate(zone: IANAZone, t: number): number {
  const wall = t + zone.offset(t) * MINUTE_MS;
  return Math.floor(wall / DAY_MS) * DAY_MS;
}

/** The hours as counted: each weekday's merged ranges in minutes, and the open milliseconds of a week. */
interface Week {
  days: [number, number][][];
  openMs: number;
}

const weeks = new WeakMap<BusinessHours, Week>();

function weekOf(hours: BusinessHours): Week {
  let week = weeks.get(hours);
  if (!week) {
    const days = WEEKDAYS.map((day) =>
      mergeRanges((hours.weekly[day] ?? []).map(([s, e]) => [minutesOf(s), minutesOf(e)])),
    );
    const openMs = days.flat().reduce((sum, [s, e]) => sum + (e - s) * MINUTE_MS, 0);
    week = { days, openMs };
    weeks.set(hours, week);
  }
  return week;
}

/** Open milliseconds of the local dates `first` … `last` (as from localDate), clipped to [start, end). */
function daysSeconds(
  clock: Clock,
  week: Week,
  [first, last]: [number, number],
  start: number,
  end: number,
): number {
  let ms = 0;
  for (let date = first; date <= last; date += DAY_MS) {
    for (const [open, close] of dayRanges(clock, week, date)) {
      ms += Math.max(0, Math.min(close, end) - Math.max(open, start));
    }
  }
  return ms;
}

/** A local date's ranges as [start, end) instants; `date` as from localDate. */
function dayRanges(clock: Clock, week: Week, date: number): [number, number][] {
  const ranges = week.days[(new Date(date).getUTCDay() + 6) % 7]!; // getUTCDay: 0 = Sunday
  return ranges.map(([start, end]) => [
    instantOf(clock, date + start * MINUTE_MS),
    instantOf(clock, date + end * MINUTE_MS), // "24:00" is the next date's 00:00
  ]);
}

/**
 * A zone with its offsets sampled once a week, at each local week's Monday minus a day (as if the
 * wall time were UTC: a day before the week's first instant in any zone), and the instant of the
 * offset change between two samples two weeks apart where they differ. Kept per zone for the
 * process's life: 16 KiB of samples (1970 to 2127; weeks outside are sampled each time).
 */
interface Clock {
  zone: IANAZone;
  samples: Int16Array;
  changes: Map<number, number>;
}

const clocks = new Map<string, Clock>();
const KEPT_WEEKS = 8192;
const UNSAMPLED = -32768;

function clockOf(name: string): Clock {
  let clock = clocks.get(name);
  if (!clock) {
    const samples = new Int16Array(KEPT_WEEKS).fill(UNSAMPLED);
    clock = { zone: IANAZone.create(name), samples, changes: new Map() };
    clocks.set(name, clock);
  }
  return clock;
}

/** The sample of week `k`: the offset (minutes) at its Monday minus a day. */
function sample(clock: Clock, k: number): number {
  const kept = k >= 0 && k < KEPT_WEEKS;
  if (kept && clock.samples[k] !== UNSAMPLED) return clock.samples[k]!;
  const offset = clock.zone.offset(mondayOf(k) - DAY_MS);
  if (kept) clock.samples[k] = offset;
  return offset;
}

/**
 * Week `k`'s offsets, before and after, and the instant the offset changes between them, from the
 * samples of week k and week k+2 (which bracket every instant of week k in any zone); undefined
 * when they agree. One change per two weeks at most: no zone changes its offset twice that fast.
 */
function changeIn(clock: Clock, k: number): { before: number; after: number; at: number } | undefined {
  const [before, after] = [sample(clock, k), sample(clock, k + 2)];
  if (before === after) return undefined;
  let at = clock.changes.get(k);
  if (at === undefined) {
    // `lo` still has the old offset, `hi` the new one; to the minute.
    let [lo, hi] = [mondayOf(k) - DAY_MS, mondayOf(k + 2) - DAY_MS];
    while (hi - lo > MINUTE_MS) {
      const mid = lo + Math.floor((hi - lo) / MINUTE_MS / 2) * MINUTE_MS;
      if (clock.zone.offset(mid) === before) lo = mid;
      else hi = mid;
    }
    at = hi;
    clock.changes.set(k, at);
  }
  return { before, after, at };
}

/**
 * The instant a wall time (as UTC milliseconds) names in the zone. Repeated on a fall-back day: the
 * first (so 01:00–04:00 covers the repeated hour). Missing on a spring-forward day: the end of the
 * gap, when the clock jumps past it (02:30 ⇒ 03:00 EDT), so that later wall times are never earlier
 * instants.
 */
function instantOf(clock: Clock, wall: number): number {
  const k = Math.floor((wall - MONDAY) / WEEK_MS);
  const change = changeIn(clock, k);
  if (!change) return wall - sample(clock, k) * MINUTE_MS;
  const early = wall - change.before * MINUTE_MS;
  if (early < change.at) return early;
  const late = wall - change.after * MINUTE_MS;
  return late >= change.at ? late : change.at;
}
