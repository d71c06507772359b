/**
 * A coded domain error. The exception filter (src/common/http-exception.filter.ts) turns it into
 * api.md's error body: { error: code, message, details? }, with optional response headers.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const unavailable = (what: string): AppError =>
  new AppError(503, "unavailable", `${what} is unavailable; retry later.`, undefined, { "retry-after": "5" });
