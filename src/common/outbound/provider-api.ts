// A provider's HTTP API as its clients see it: the connection's OAuth token, the call paced to the
// provider's budgets (every provider call passes here), classified like every side effect, and
// answers checked against a schema before anyone reads them.
import { Logger } from "@nestjs/common";
import type { ClassConstructor } from "class-transformer";
import secureJson from "secure-json-parse";
import { checkAnswer } from "./answer-schema.js";
import { callDestination, transportError } from "./destination.js";
import { CredentialError, PermanentError, RetryableError, WaitRequired } from "./errors.js";
import type { ProviderQuota } from "./provider-quota.js";

/** The code of an answer that is not what the API promises (not JSON, wrong types, missing fields). */
export const PROVIDER_BAD_RESPONSE = "provider_bad_response";

/** Route parameters, e.g. `{ id: leadId }` for "/v3/leads/{id}". */
export type RouteParams = Record<string, string>;

const logger = new Logger("provider-api");

export class ProviderApi {
  /**
   * @param provider named in the log line of a bad answer
   * @param baseUrl the API origin, e.g. https://api.yelp.com
   * @param quota the provider's call budgets, which every call goes through
   */
  constructor(
    private readonly provider: string,
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
    private readonly quota: Pick<ProviderQuota, "paced">,
  ) {}

  /**
   * GET `route` and return its answer as an instance of `schema`. An answer that is not JSON or does
   * not match the schema is logged once (provider, route, the failed rules: no token, no body) and
   * thrown as a retryable `provider_bad_response`: the provider may answer properly next time.
   */
  async get<T extends object>(
    route: string,
    params: RouteParams,
    token: string | undefined,
    schema: ClassConstructor<T>,
  ): Promise<T> {
    const response = await this.call("GET", route, params, token);
    return this.answer("GET", route, response, schema);
  }

  /**
   * `method` with `body` as JSON, answered as an instance of `schema` (checked as `get` does): for
   * calls whose answer the caller needs (the id of a webhook it created).
   */
  async send<T extends object>(
    method: "POST" | "PUT",
    route: string,
    params: RouteParams,
    token: string | undefined,
    body: unknown,
    schema: ClassConstructor<T>,
  ): Promise<T> {
    const response = await this.call(method, route, params, token, body);
    return this.answer(method, route, response, schema);
  }

  /** `method` (`body` as JSON when given); a 2xx is the answer, its body is not read. */
  async request(
    method: "POST" | "PUT" | "DELETE",
    route: string,
    params: RouteParams,
    token: string | undefined,
    body?: unknown,
  ): Promise<void> {
    const response = await this.call(method, route, params, token, body);
    await response.body?.cancel();
  }

  private async answer<T extends object>(
    method: string,
    route: string,
    response: Response,
    schema: ClassConstructor<T>,
  ): Promise<T> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw transportError(error);
    }
    let json: unknown;
    try {
      json = secureJson.parse(text, { protoAction: "remove", constructorAction: "remove" });
    } catch {
      throw this.badResponse(method, route, response.status, ["the body is not JSON"]);
    }
    const checked = checkAnswer(schema, json);
    if (!checked.ok) throw this.badResponse(method, route, response.status, checked.problems);
    return checked.value;
  }

  /**
   * POST `body` as JSON to `route`. A 2xx status is the answer: the body is not read (no caller
   * uses it), so an answer's shape cannot fail a call that took effect.
   */
  async post(route: string, params: RouteParams, token: string | undefined, body: unknown): Promise<void> {
    const response = await this.call("POST", route, params, token, body);
    await response.body?.cancel();
  }

  /**
   * One call, in its turn of the provider's budgets (which may wait, or throw `WaitRequired`).
   * A 429 with Retry-After is a quota wait too: the job waits (no attempt used) until then.
   */
  private async call(
    method: "GET" | "POST" | "PUT" | "DELETE",
    route: string,
    params: RouteParams,
    token: string | undefined,
    body?: unknown,
  ): Promise<Response> {
    // No token: the connection needs one (credential problem), nothing is sent.
    if (!token) throw new CredentialError("no_credentials");
    const url = `${this.baseUrl}${expand(route, params)}`;
    try {
      return await this.quota.paced(this.provider, endpoint(method, route), () =>
        callDestination(
          url,
          {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          },
          this.timeoutMs,
          "provider",
        ),
      );
    } catch (error) {
      if (error instanceof RetryableError && error.code === "http_429" && error.retryAfterMs !== undefined)
        throw new WaitRequired("quota", new Date(Date.now() + error.retryAfterMs));
      throw error;
    }
  }

  private badResponse(method: string, route: string, status: number, problems: string[]): RetryableError {
    logger.warn({
      msg: "provider answer of the wrong shape",
      provider: this.provider,
      endpoint: endpoint(method, route),
      status,
      errorCode: PROVIDER_BAD_RESPONSE,
      problems: problems.slice(0, 10),
    });
    return new RetryableError(PROVIDER_BAD_RESPONSE);
  }
}

/**
 * What a provider's per-endpoint budget counts: the method and the path template, without the
 * query, e.g. "GET /v3/leads/{id}/events" (every lead's calls share it).
 */
export function endpoint(method: string, route: string): string {
  return `${method} ${route.split("?")[0]}`;
}

/**
 * "/v3/leads/{id}/events?limit=20" with { id } → "/v3/leads/<id, URL-encoded>/events?limit=20".
 * Each value is one path segment (or query value) whatever it holds: `/`, `?`, `#` and `%` are
 * encoded. A path segment that is empty or only dots is refused (a permanent `invalid_path_parameter`,
 * nothing sent): URL parsers resolve `.`, `..` and their encoded forms (`%2e%2e`) as steps up the
 * path, so no encoding keeps them in place. Ids come from stored rows, so even one stored before
 * ids were checked (or by hand) cannot point a call at another route.
 */
export function expand(route: string, params: RouteParams): string {
  const query = route.indexOf("?");
  return route.replace(/\{(\w+)\}/g, (_match, name: string, offset: number) => {
    const value = params[name];
    if (value === undefined) throw new Error(`route ${route} needs the parameter ${name}`);
    const inPath = query < 0 || offset < query;
    if (inPath && /^\.*$/.test(value)) throw new PermanentError("invalid_path_parameter");
    return encodeURIComponent(value);
  });
}
