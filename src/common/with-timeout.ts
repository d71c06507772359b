/** The rejection of `withTimeout` when the time ran out (the call's own outcome is then ignored). */
export class TimedOut extends Error {}

/** The promise's outcome, or a rejection (TimedOut) naming `what` once `ms` passed (the timer is always cleared). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what = "the call"): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`no answer from ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
