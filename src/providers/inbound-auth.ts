// How a provider authenticates its deliveries to one connection (api.md, "Connection bodies").
import type { IncomingHttpHeaders } from "node:http";
import { AppError } from "../common/app-error.js";
import { secretsEqual } from "../crypto/constant-time.js";

export const INBOUND_AUTH_TYPES = ["bearer", "basic", "header", "token", "apiKey", "none"] as const;
export type InboundAuthType = (typeof INBOUND_AUTH_TYPES)[number];

/** The secrets of one inbound auth configuration; stored only encrypted. */
export type InboundCredentials =
  | { type: "bearer"; bearerToken: string }
  | { type: "basic"; username: string; password: string }
  | { type: "header"; headerName: string; headerValue: string }
  | { type: "token"; token: string }
  | { type: "apiKey"; apiKey: string }
  | { type: "none" };

export const unauthorized = (): AppError =>
  new AppError(401, "unauthorized", "The delivery's credentials are missing or wrong.");

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? undefined : value; // a repeated credential header is never accepted
}

function authorization(headers: IncomingHttpHeaders, scheme: string): string | undefined {
  const value = header(headers, "authorization");
  if (value === undefined) return undefined;
  const space = value.indexOf(" ");
  if (space < 0 || value.slice(0, space).toLowerCase() !== scheme) return undefined;
  return value.slice(space + 1).trim();
}

function basicPair(headers: IncomingHttpHeaders): { username: string; password: string } | undefined {
  const encoded = authorization(headers, "basic");
  if (encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export interface CredentialSources {
  headers: IncomingHttpHeaders;
  query: Record<string, string | undefined>;
  /** The sender-provided API key inside the body (Static Forms' `data.apiKey`), when the provider has one. */
  bodyApiKey?: string | undefined;
}

/** True when the delivery carries these credentials. Every comparison is constant-time. */
export function matches(credentials: InboundCredentials, sources: CredentialSources): boolean {
  switch (credentials.type) {
    case "bearer":
      return secretsEqual(authorization(sources.headers, "bearer"), credentials.bearerToken);
    case "basic": {
      const pair = basicPair(sources.headers);
      // Both compared, always, so a right username with a wrong password takes as long as anything else.
      const user = secretsEqual(pair?.username, credentials.username);
      const password = secretsEqual(pair?.password, credentials.password);
      return user && password;
    }
    case "header":
      return secretsEqual(header(sources.headers, credentials.headerName), credentials.headerValue);
    case "token":
      return secretsEqual(sources.query.token, credentials.token);
    case "apiKey":
      return secretsEqual(sources.bodyApiKey, credentials.apiKey);
    case "none":
      return true;
  }
}

/** Accepts the delivery if any accepted credential set matches (current, or previous during rotation). */
export function verifyAny(accepted: InboundCredentials[], sources: CredentialSources): void {
  const results = accepted.map((credentials) => matches(credentials, sources));
  if (!results.includes(true)) throw unauthorized();
}
