/** Leads one backfill counts and ingests at most (the window's newest first). */
export const BACKFILL_MAX_LEADS = 5_000;
