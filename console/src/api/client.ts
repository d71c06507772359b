// The console's only way to the API: documented /admin/* and /console/api/* routes (the path, query
// and answer types come from docs/openapi.json through openapi-typescript), same-origin credentials
// (the session cookie), and the session's CSRF token on every request that is not a GET.
import type { paths } from "./schema";

/** The documented routes (docs/openapi.json). */
export type Paths = paths;
type Method = "get" | "post" | "patch" | "delete";
export type PathOf<M extends Method> = {
  [P in keyof Paths]: undefined extends Paths[P][M & keyof Paths[P]] ? never : P;
}[keyof Paths];
type Operation<P, M extends Method> = P extends keyof Paths
  ? NonNullable<Paths[P][M & keyof Paths[P]]>
  : never;
type Params<P, M extends Method> =
  Operation<P, M> extends { parameters: infer X } ? X : { query?: never; path?: never };
export type QueryOf<P, M extends Method = "get"> =
  Params<P, M> extends { query?: infer Q } ? NonNullable<Q> : never;
type PathParams<P, M extends Method> = Params<P, M> extends { path?: infer X } ? X : never;

export interface CallOptions<P, M extends Method> {
  query?: QueryOf<P, M>;
  path?: PathParams<P, M>;
  body?: unknown;
}

/** An error answer in api.md's shape: `{ error, message, details? }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

let sessionEnded: (() => void) | undefined;
/**
 * Called when an /admin/* route answers 401: the session ended while in use (revoked, expired, the
 * user disabled). The console's entry sends the browser to the sign-in screen from here.
 */
export function onSessionEnded(listener: () => void): void {
  sessionEnded = listener;
}

let csrfToken: string | undefined;
/** Set from the session (GET or POST /console/api/session); sent as X-CSRF-Token on non-GETs. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

function url(path: string, options: CallOptions<unknown, Method>): string {
  const params = (options.path ?? {}) as Record<string, string>;
  const filled = path.replace(/\{(\w+)\}/g, (_all, name: string) => encodeURIComponent(params[name] ?? ""));
  const search = new URLSearchParams();
  const query = (options.query ?? {}) as Record<string, string | number | boolean | undefined>;
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `${filled}?${text}` : filled;
}

const NOT_JSON = Symbol("not JSON");

function parsed(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

async function call<T>(method: Method, path: string, options: CallOptions<unknown, Method> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (method !== "get" && csrfToken) headers["x-csrf-token"] = csrfToken;
  const response = await fetch(url(path, options), {
    method: method.toUpperCase(),
    headers,
    credentials: "same-origin",
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  // The session ended, whatever the body says (a proxy in front may answer 401 with HTML).
  if (response.status === 401 && path.startsWith("/admin/")) sessionEnded?.();
  const text = await response.text();
  const json = parsed(text);
  if (json === NOT_JSON) {
    // A proxy's HTML error page, say: an ApiError all the same, naming the status.
    throw new ApiError(response.status, "not_json", `The server answered ${response.status} without JSON.`);
  }
  if (!response.ok) {
    const error = (json ?? {}) as { error?: string; message?: string; details?: unknown };
    throw new ApiError(
      response.status,
      error.error ?? "http_error",
      error.message ?? response.statusText,
      error.details,
    );
  }
  return json as T;
}

type Responses<P, M extends Method> = Operation<P, M> extends { responses: infer R } ? R : never;
type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;
type Success<R> = { [C in keyof R]: C extends 200 | 201 | 202 ? Json<R[C]> : never }[keyof R];
/** The answer's type: the route's documented 2xx JSON bodies (none: a 204, nothing to read). */
type Answer<M extends Method, P> = P extends unknown
  ? [Success<Responses<P, M>>] extends [never]
    ? undefined
    : Success<Responses<P, M>>
  : never;

export const api = {
  get: <P extends PathOf<"get">>(path: P, options?: CallOptions<P, "get">) =>
    call<Answer<"get", P>>("get", path, options),
  post: <P extends PathOf<"post">>(path: P, options?: CallOptions<P, "post">) =>
    call<Answer<"post", P>>("post", path, options),
  patch: <P extends PathOf<"patch">>(path: P, options?: CallOptions<P, "patch">) =>
    call<Answer<"patch", P>>("patch", path, options),
  delete: <P extends PathOf<"delete">>(path: P, options?: CallOptions<P, "delete">) =>
    call<Answer<"delete", P>>("delete", path, options),
};
