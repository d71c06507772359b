// Business hours (api.md "First replies"): an IANA time zone and ranges per weekday, in local time.
// CONTRACT STUB: implemented on branch `replies`.

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

export function checkBusinessHours(_value: unknown): BusinessHoursError | undefined {
  throw new Error("not implemented");
}

/** Whether `at` falls inside the hours; no hours (undefined or null) means always open. */
export function isOpen(_hours: BusinessHours | null | undefined, _at: Date): boolean {
  throw new Error("not implemented");
}

/** Seconds between `from` and `to` that fall inside the hours (no hours: all of them); 0 if to <= from. */
export function businessSeconds(_hours: BusinessHours | null | undefined, _from: Date, _to: Date): number {
  throw new Error("not implemented");
}
