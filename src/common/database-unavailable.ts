/**
 * Whether an error says the database could not be reached or could not take the request now (not
 * that the request was wrong, which would fail again): the exception filter answers these
 * `503 unavailable` with Retry-After, as ingest does, so a client retries instead of reporting a
 * bug. The shapes, as Prisma (through its pg driver adapter) and `pg` throw them:
 * - Prisma's connection errors by code (P1001 can't reach, P2024 no pooled connection in time, ...),
 *   and the adapter's own cause where Prisma wraps one (a raw query's P2010, a model query's
 *   DriverAdapterError): a connection that could not be made or was lost, or a server refusal;
 * - `pg`'s: the server's refusal by SQLSTATE, a socket error's code, or its words.
 */
export function databaseUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code, message } = error as Record<string, unknown>;
  const cause = adapterCause(error);
  if (cause) return UNAVAILABLE_KINDS.has(cause.kind) || (cause.kind === "postgres" && refusal(cause.code));
  if (name === "PrismaClientInitializationError") return true;
  if (typeof code === "string" && (PRISMA_CODES.has(code) || SOCKET_CODES.has(code) || refusal(code)))
    return true;
  return typeof message === "string" && DRIVER_MESSAGES.some((pattern) => pattern.test(message));
}

interface AdapterCause {
  kind?: unknown;
  code?: unknown;
}

/** The driver adapter's account of the failure: a DriverAdapterError's cause, or the one Prisma keeps in `meta`. */
function adapterCause(error: object): AdapterCause | undefined {
  const { name, cause, meta } = error as { name?: unknown; cause?: unknown; meta?: unknown };
  if (name === "DriverAdapterError" && typeof cause === "object" && cause !== null) return cause;
  const wrapped = (meta as { driverAdapterError?: { cause?: unknown } } | undefined)?.driverAdapterError
    ?.cause;
  return typeof wrapped === "object" && wrapped !== null ? wrapped : undefined;
}

/** The server refusing the connection or the session: shutting down, starting up, full, the link lost. */
const refusal = (code: unknown) => typeof code === "string" && REFUSALS.has(code);
const REFUSALS = new Set(["57P01", "57P02", "57P03", "53300", "08000", "08001", "08003", "08004", "08006"]);

const UNAVAILABLE_KINDS = new Set<unknown>([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);
/** Can't reach, timed out reaching, operations timed out, connection closed, no pooled connection in time, too many connections. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);
/** What node-postgres says in words only: the connection lost, no pooled connection in time, no answer in time. */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
  /^Query read timeout/,
];
