import fc from "fast-check";
import { DateTime } from "luxon";
import {
  type BusinessHours,
  businessSeconds,
  checkBusinessHours,
  isOpen,
  mergedBusinessHours,
  WEEKDAYS,
} from "./business-hours.js";

const NY = "America/New_York";
/** An instant given as a wall time in a zone (a wall time that does not exist maps forward). */
const local = (iso: string, zone = NY) => DateTime.fromISO(iso, { zone }).toJSDate();
const utc = (iso: string) => new Date(`${iso}Z`);
const weekdays = (ranges: [string, string][]): BusinessHours["weekly"] => ({
  mon: ranges,
  tue: ranges,
  wed: ranges,
  thu: ranges,
  fri: ranges,
});
const hhmm = (m: number) =>
  `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
const office: BusinessHours = { timezone: NY, weekly: weekdays([["08:00", "18:00"]]) };

describe("businessSeconds and isOpen", () => {
  it("without hours: always open, wall seconds, nothing for an empty or reversed span", () => {
    const from = utc("2026-03-08T05:00:00");
    expect(isOpen(null, from)).toBe(true);
    expect(isOpen(undefined, from)).toBe(true);
    expect(businessSeconds(null, from, utc("2026-03-09T05:00:01"))).toBe(86401);
    expect(businessSeconds(undefined, from, from)).toBe(0);
    expect(businessSeconds(null, from, utc("2026-03-08T04:00:00"))).toBe(0);
    expect(businessSeconds(office, from, utc("2026-03-08T04:00:00"))).toBe(0);
  });

  it("spring forward (New York, 2026-03-08): 01:00–04:00 lasts 2 hours; 02:00–03:00 does not exist", () => {
    const hours: BusinessHours = { timezone: NY, weekly: { sun: [["01:00", "04:00"]] } };
    // Midnight EST (05:00Z) to midnight EDT (04:00Z the next day): a 23-hour day.
    expect(businessSeconds(hours, utc("2026-03-08T05:00:00"), utc("2026-03-09T04:00:00"))).toBe(7200);
    expect(local("2026-03-08T02:30")).toEqual(utc("2026-03-08T07:30:00")); // 03:30 EDT
    expect(isOpen(hours, local("2026-03-08T02:30"))).toBe(true);
    expect(isOpen(hours, utc("2026-03-08T05:59:59"))).toBe(false); // 00:59:59 EST
    expect(isOpen(hours, utc("2026-03-08T06:00:00"))).toBe(true); // 01:00 EST
    expect(isOpen(hours, utc("2026-03-08T07:59:59"))).toBe(true); // 03:59:59 EDT
    expect(isOpen(hours, utc("2026-03-08T08:00:00"))).toBe(false); // 04:00 EDT
    // A missing wall time is the end of the gap, 03:00 EDT: a range inside the missing hour has no length.
    const day: [Date, Date] = [utc("2026-03-08T05:00:00"), utc("2026-03-09T04:00:00")];
    const range = (start: string, end: string): BusinessHours => ({
      timezone: NY,
      weekly: { sun: [[start, end]] },
    });
    expect(businessSeconds(range("02:00", "03:00"), ...day)).toBe(0);
    expect(businessSeconds(range("02:15", "02:45"), ...day)).toBe(0);
    expect(isOpen(range("02:00", "03:00"), utc("2026-03-08T07:00:00"))).toBe(false);
    expect(businessSeconds(range("01:00", "02:30"), ...day)).toBe(3600);
    expect(businessSeconds(range("02:50", "03:10"), ...day)).toBe(600);
    expect(isOpen(range("02:30", "04:00"), utc("2026-03-08T07:00:00"))).toBe(true); // 03:00 EDT
  });

  it("fall back (New York, 2026-11-01): 01:00–04:00 and 00:00–03:00 last 4 hours", () => {
    const day: [Date, Date] = [utc("2026-11-01T04:00:00"), utc("2026-11-02T05:00:00")]; // 25 hours
    const range = (start: string, end: string): BusinessHours => ({
      timezone: NY,
      weekly: { sun: [[start, end]] },
    });
    expect(businessSeconds(range("01:00", "04:00"), ...day)).toBe(4 * 3600);
    expect(businessSeconds(range("00:00", "03:00"), ...day)).toBe(4 * 3600);
    expect(businessSeconds(range("00:00", "24:00"), ...day)).toBe(25 * 3600);
    // Both 01:30s (EDT, then EST) are open; 04:00 EST is not.
    expect(isOpen(range("01:00", "04:00"), utc("2026-11-01T05:30:00"))).toBe(true);
    expect(isOpen(range("01:00", "04:00"), utc("2026-11-01T06:30:00"))).toBe(true);
    expect(isOpen(range("01:00", "04:00"), utc("2026-11-01T04:59:59"))).toBe(false);
    expect(isOpen(range("01:00", "04:00"), utc("2026-11-01T09:00:00"))).toBe(false);
  });

  it("Asia/Kolkata (+05:30): several ranges a day", () => {
    const hours: BusinessHours = {
      timezone: "Asia/Kolkata",
      weekly: {
        tue: [
          ["09:00", "13:00"],
          ["14:00", "18:30"],
        ],
      },
    };
    expect(isOpen(hours, utc("2026-12-01T03:29:59"))).toBe(false); // 08:59:59 IST
    expect(isOpen(hours, utc("2026-12-01T03:30:00"))).toBe(true); // 09:00 IST
    expect(isOpen(hours, utc("2026-12-01T08:15:00"))).toBe(false); // 13:45 IST
    expect(isOpen(hours, utc("2026-12-01T12:59:59"))).toBe(true); // 18:29:59 IST
    expect(isOpen(hours, utc("2026-12-02T04:00:00"))).toBe(false); // Wednesday
    expect(businessSeconds(hours, utc("2026-11-30T00:00:00"), utc("2026-12-03T00:00:00"))).toBe(8.5 * 3600);
    expect(businessSeconds(hours, utc("2026-12-01T07:00:00"), utc("2026-12-01T09:00:00"))).toBe(3600);
  });

  it("a lead at 17:55 answered at 08:05 the next weekday counts 10 minutes, across a closed weekend too", () => {
    expect(businessSeconds(office, local("2026-12-01T17:55"), local("2026-12-02T08:05"))).toBe(600);
    expect(businessSeconds(office, local("2026-12-04T17:55"), local("2026-12-07T08:05"))).toBe(600);
    expect(isOpen(office, local("2026-12-05T12:00"))).toBe(false); // Saturday
    expect(isOpen(office, local("2026-12-04T17:59:59"))).toBe(true);
    expect(isOpen(office, local("2026-12-04T18:00"))).toBe(false);
  });

  it('"24:00" ends a day: Saturday 20:00–24:00 runs into Sunday 00:00–02:00', () => {
    const hours: BusinessHours = {
      timezone: NY,
      weekly: { sat: [["20:00", "24:00"]], sun: [["00:00", "02:00"]] },
    };
    expect(businessSeconds(hours, local("2026-12-05T23:00"), local("2026-12-06T01:00"))).toBe(7200);
    expect(isOpen(hours, local("2026-12-05T23:59:59"))).toBe(true);
    expect(isOpen(hours, local("2026-12-06T00:00"))).toBe(true);
    expect(isOpen(hours, local("2026-12-06T02:00"))).toBe(false);
  });

  it("a year of office hours: 52 weeks of 5 ten-hour days, DST changes included", () => {
    expect(businessSeconds(office, local("2026-01-05T00:00"), local("2027-01-04T00:00"))).toBe(260 * 36000);
  });

  const minutes = fc.uniqueArray(fc.integer({ min: 0, max: 1440 }), { maxLength: 12 });
  const ranges = minutes.map((ms) => {
    const sorted = [...ms].sort((a, b) => a - b);
    const pairs: [string, string][] = [];
    for (let i = 0; i + 1 < sorted.length; i += 2) pairs.push([hhmm(sorted[i]!), hhmm(sorted[i + 1]!)]);
    return pairs;
  });
  const hours: fc.Arbitrary<BusinessHours> = fc.record({
    timezone: fc.constantFrom(NY, "Asia/Kolkata", "Europe/London", "Australia/Lord_Howe", "UTC"),
    weekly: fc.record(Object.fromEntries(WEEKDAYS.map((d) => [d, ranges])), { requiredKeys: [] }),
  });
  // Around the 2026 DST changes of the zones above, to the second.
  const instant = fc
    .integer({ min: Date.UTC(2026, 2, 1) / 1000, max: Date.UTC(2026, 3, 15) / 1000 })
    .chain((s) => fc.constantFrom(s, s + 205 * 86400))
    .map((s) => new Date(s * 1000));

  it("is additive over any split of a span, and never more than its wall seconds", () => {
    fc.assert(
      fc.property(hours, instant, instant, instant, (h, a, b, c) => {
        expect(checkBusinessHours(h)).toBeUndefined();
        const [from, m, to] = [a, b, c].sort((x, y) => x.getTime() - y.getTime()) as [Date, Date, Date];
        const whole = businessSeconds(h, from, to);
        expect(whole).toBe(businessSeconds(h, from, m) + businessSeconds(h, m, to));
        expect(whole).toBeGreaterThanOrEqual(0);
        expect(whole).toBeLessThanOrEqual((to.getTime() - from.getTime()) / 1000);
        // isOpen agrees: the second after an open instant counts, after a closed one does not.
        expect(businessSeconds(h, m, new Date(m.getTime() + 1000)) > 0).toBe(isOpen(h, m));
      }),
    );
  });
});

/**
 * The day-by-day count businessSeconds replaced (linear in the days of the span), as the oracle its
 * week-by-week count must agree with: each range turned into the instants its wall times name on
 * that local date, by luxon, a gap's wall time moved to the gap's end, a repeated one the first.
 */
function dayByDay(hours: BusinessHours, from: Date, to: Date): number {
  const [start, end] = [from.getTime(), to.getTime()];
  if (end <= start) return 0;
  const instant = (date: DateTime, minutes: number) => {
    const wall = date.plus({ minutes });
    const at = DateTime.fromObject(
      { year: wall.year, month: wall.month, day: wall.day, hour: wall.hour, minute: wall.minute },
      { zone: hours.timezone },
    );
    // luxon moves a missing wall time forward by the gap; the gap's end is the first valid minute after it.
    if (at.hour !== wall.hour || at.minute !== wall.minute) return at.startOf("hour").toMillis();
    return at.toMillis();
  };
  const dateOf = (t: number) => {
    const local = DateTime.fromMillis(t, { zone: hours.timezone });
    return DateTime.utc(local.year, local.month, local.day);
  };
  let ms = 0;
  for (let date = dateOf(start); date <= dateOf(end); date = date.plus({ days: 1 })) {
    for (const [a, b] of hours.weekly[WEEKDAYS[date.weekday - 1]!] ?? []) {
      const minutes = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3));
      const [open, close] = [instant(date, minutes(a)), instant(date, minutes(b))];
      ms += Math.max(0, Math.min(close, end) - Math.max(open, start));
    }
  }
  return ms / 1000;
}

describe("businessSeconds over long spans", () => {
  const zones = [
    "America/New_York",
    "Europe/London",
    "Australia/Lord_Howe",
    "America/Sao_Paulo",
    "Asia/Kolkata",
  ];
  const shop: BusinessHours["weekly"] = {
    mon: [
      ["00:00", "03:00"],
      ["08:00", "12:00"],
      ["13:00", "18:00"],
    ],
    wed: [
      ["01:00", "02:30"],
      ["22:00", "24:00"],
    ],
    sat: [["02:15", "04:00"]],
    sun: [["00:00", "24:00"]],
  };

  it("agrees with the day-by-day count over years, DST weeks included, in zones with and without DST", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(1995, 0, 1) / 1000, max: Date.UTC(2026, 0, 1) / 1000 }),
        fc.integer({ min: 0, max: 3 * 365 * 86400 }),
        (timezone, from, span) => {
          const hours = { timezone, weekly: shop };
          const [a, b] = [new Date(from * 1000), new Date((from + span) * 1000)];
          expect(businessSeconds(hours, a, b)).toBe(dayByDay(hours, a, b));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("counts from 1970 to today as the day-by-day count does", () => {
    const hours = { timezone: "America/New_York", weekly: shop };
    const [a, b] = [new Date(0), new Date(Date.UTC(2026, 11, 7, 15, 30))];
    expect(businessSeconds(hours, a, b)).toBe(dayByDay(hours, a, b));
  });
});

describe("mergedBusinessHours", () => {
  it("joins touching ranges and sorts each day; the count sees the same", () => {
    const hours: BusinessHours = {
      timezone: NY,
      weekly: {
        mon: [
          ["12:00", "18:00"],
          ["08:00", "12:00"],
          ["19:00", "20:00"],
        ],
        tue: [],
      },
    };
    expect(mergedBusinessHours(hours)).toEqual({
      timezone: NY,
      weekly: {
        mon: [
          ["08:00", "18:00"],
          ["19:00", "20:00"],
        ],
        tue: [],
      },
    });
    const monday = [local("2026-12-07T00:00"), local("2026-12-08T00:00")] as const;
    expect(businessSeconds(hours, ...monday)).toBe(11 * 3600);
  });
});

describe("checkBusinessHours", () => {
  it("counts touching ranges as one: 24 one-hour ranges are one day-long range", () => {
    const hourly = Array.from({ length: 24 }, (_, h) => [hhmm(h * 60), hhmm(h * 60 + 60)]);
    expect(checkBusinessHours({ timezone: NY, weekly: { mon: hourly } })).toBeUndefined();
  });

  it("accepts the api.md shape: missing days closed, touching ranges, 24:00 as an end", () => {
    expect(checkBusinessHours(office)).toBeUndefined();
    expect(checkBusinessHours({ timezone: "Asia/Kolkata", weekly: {} })).toBeUndefined();
    expect(
      checkBusinessHours({
        timezone: "Europe/Berlin",
        weekly: {
          mon: [
            ["12:00", "18:00"],
            ["00:00", "12:00"],
          ],
          sat: [["20:00", "24:00"]],
          sun: [],
        },
      }),
    ).toBeUndefined();
  });

  const valid = { timezone: NY, weekly: {} };
  const mon = (...ranges: unknown[]) => ({ timezone: NY, weekly: { mon: ranges } });
  it.each<[string, unknown, string, string]>([
    ["not an object", "08:00-18:00", "", "must be an object"],
    ["null", null, "", "must be an object"],
    ["an array", [], "", "must be an object"],
    ["an extra key", { ...valid, holidays: [] }, "holidays", "unknown field"],
    ["no time zone", { weekly: {} }, "timezone", "IANA time zone"],
    ["a number as time zone", { ...valid, timezone: 5 }, "timezone", "IANA time zone"],
    ["an unknown time zone", { ...valid, timezone: "Mars/Olympus_Mons" }, "timezone", '"Mars/Olympus_Mons"'],
    ["an offset as time zone", { ...valid, timezone: "+05:30" }, "timezone", "IANA time zone"],
    ["an offset after UTC", { ...valid, timezone: "UTC+5" }, "timezone", "IANA time zone"],
    ["no weekly", { timezone: NY }, "weekly", "must be an object"],
    ["weekly an array", { timezone: NY, weekly: [] }, "weekly", "must be an object"],
    ["an unknown weekday", { timezone: NY, weekly: { monday: [] } }, "weekly.monday", "mon, tue"],
    ["a day not a list", { timezone: NY, weekly: { tue: "closed" } }, "weekly.tue", "list of ranges"],
    ["a range of one time", mon(["08:00"]), "weekly.mon[0]", "pair"],
    ["a range of three times", mon(["08:00", "12:00", "13:00"]), "weekly.mon[0]", "pair"],
    ["a range of numbers", mon([8, 18]), "weekly.mon[0]", "pair"],
    ["a range not a list", mon("08:00-18:00"), "weekly.mon[0]", "pair"],
    ["an hour without its zero", mon(["8:00", "18:00"]), "weekly.mon[0]", '"8:00"'],
    ["minute 60", mon(["08:00", "23:60"]), "weekly.mon[0]", '"23:60"'],
    ["hour 25", mon(["08:00", "25:00"]), "weekly.mon[0]", "HH:MM"],
    ["24:01", mon(["08:00", "24:01"]), "weekly.mon[0]", "HH:MM"],
    ["24:00 as a start", mon(["24:00", "24:00"]), "weekly.mon[0]", "24:00"],
    ["a reversed range", mon(["18:00", "08:00"]), "weekly.mon[0]", "start before its end"],
    ["an empty range", mon(["08:00", "08:00"]), "weekly.mon[0]", "start before its end"],
    ["overlapping ranges", mon(["08:00", "12:00"], ["11:00", "13:00"]), "weekly.mon[1]", "weekly.mon[0]"],
    ["an overlap listed first", mon(["11:00", "13:00"], ["08:00", "12:00"]), "weekly.mon[1]", "overlaps"],
    ["a range inside another", mon(["08:00", "18:00"], ["09:00", "10:00"]), "weekly.mon[1]", "overlaps"],
    ["the same range twice", mon(["08:00", "12:00"], ["08:00", "12:00"]), "weekly.mon[1]", "overlaps"],
    ["a bad third range", mon(["08:00", "09:00"], ["10:00", "11:00"], ["12:00"]), "weekly.mon[2]", "pair"],
    [
      "a 7th range",
      mon(...["00", "02", "04", "06", "08", "10", "12"].map((h) => [`${h}:00`, `${h}:30`])),
      "weekly.mon",
      "at most 6 ranges a day",
    ],
    [
      "1,440 one-minute ranges",
      mon(...Array.from({ length: 720 }, (_, i) => [hhmm(2 * i), hhmm(2 * i + 1)])),
      "weekly.mon",
      "720 given",
    ],
  ])("refuses %s", (_name, value, field, message) => {
    const error = checkBusinessHours(value);
    expect(error?.field).toBe(field);
    expect(error?.message).toContain(message);
  });
});
