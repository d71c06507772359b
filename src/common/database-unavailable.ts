/**
 * Whether an error says the database could not be reached or could not take the request now (not
 * that the request was wrong): Prisma's connection errors, the driver's socket errors, and the
 * server's own refusals of a connection. The exception filter answers these `503 unavailable` with
 * Retry-After, as ingest does, so a client retries instead of reporting a bug.
 */
export function databaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, errorCode, name, message } = error as Record<string, unknown>;
  if (name === "PrismaClientInitializationError") return true;
  const codes = [code, errorCode].filter((value): value is string => typeof value === "string");
  if (
    codes.some(
      (value) => PRISMA_CODES.has(value) || SOCKET_CODES.has(value) || /^(08|57P0|53300)/.test(value),
    )
  )
    return true;
  // node-postgres says these in words only.
  return typeof message === "string" && DRIVER_MESSAGES.some((pattern) => pattern.test(message));
}

/** Can't reach, timed out reaching, operations timed out, connection closed, no pooled connection in time. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
];
