// The business-clock cutoff of the lead.unanswered sweep: the latest creation time past target.
import { DateTime } from "luxon";
import { businessSeconds, type BusinessHours } from "../replies/business-hours.js";
import { businessCutoff } from "./unanswered-sweep.js";

const NY = "America/New_York";
const at = (iso: string) => DateTime.fromISO(iso, { zone: NY }).toJSDate();
const office: BusinessHours = {
  timezone: NY,
  weekly: Object.fromEntries(["mon", "tue", "wed", "thu", "fri"].map((d) => [d, [["08:00", "18:00"]]])),
};

describe("businessCutoff", () => {
  it("Monday 08:10 with a 5-minute target: leads created before Monday 08:05 are overdue (Friday 17:55 too)", () => {
    const now = at("2026-12-07T08:10");
    const cutoff = businessCutoff(office, 300, now, at("2026-11-30T08:10"))!;
    // Friday 17:55 plus Monday 08:00-08:10: 15 minutes. 08:05 Monday has waited exactly 300 s.
    expect(cutoff).toEqual(at("2026-12-07T08:05"));
    expect(businessSeconds(office, new Date(cutoff.getTime() - 1), now)).toBeGreaterThan(300);
    expect(businessSeconds(office, cutoff, now)).toBe(300);
  });

  it("null when the window holds too few business seconds (a closed weekend), or the target is past the window", () => {
    const sunday = at("2026-12-06T12:00");
    expect(businessCutoff(office, 300, sunday, at("2026-12-05T18:00"))).toBeNull();
    expect(businessCutoff(office, 86_400, at("2026-12-07T08:10"), at("2026-12-07T00:00"))).toBeNull();
  });
});
