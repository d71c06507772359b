/** Polls `probe` until it returns a value that `done` accepts, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await probe();
  }
  return value;
}

/** Not yet settled: what `atOnce` answers for a promise that waits for a timer or I/O. */
export const PENDING = Symbol("pending");

/**
 * What `promise` settled to without waiting for a timer (it settles in this turn of the event loop),
 * or PENDING: "answers at once" asserted without a clock, so a busy machine cannot fail it.
 */
export function atOnce<T>(promise: Promise<T>): Promise<T | typeof PENDING> {
  return Promise.race([
    promise,
    new Promise<typeof PENDING>((resolve) => setImmediate(() => resolve(PENDING))),
  ]);
}
