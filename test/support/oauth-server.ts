// A strict fake of Yelp's and Thumbtack's OAuth 2 authorization servers (providers.md "Connecting a
// business: OAuth", "Connecting a pro: OAuth"): the checks a real one makes before it issues a token,
// answered as that provider answers a mismatch. Routes are the caller's (`useFakeOAuth` in
// fake-providers.ts, or a test's own server); this holds the registered clients and the issued codes.
//
// - authorize: the registered client_id, response_type=code, a redirect_uri to a callback, and a PKCE
//   challenge with method S256 (Leadgate always sends one); anything else is a 400 page, never a
//   redirect (a real server does not send the browser to an unverified client).
// - token and revoke: the client authenticates as the provider expects. Yelp: client_id and
//   client_secret in the form body ([DOCS]); Thumbtack: HTTP Basic, RFC 6749's default ([ASSUMPTION],
//   src/providers/thumbtack/thumbtack.capabilities.ts). The other way, a wrong id or a wrong secret
//   is invalid_client.
// - authorization_code: a code issued to this client and not used, redirect_uri identical to the
//   authorize request's, and a code_verifier whose S256 is the code_challenge; else invalid_grant.
// Errors: Yelp's own shape, `{"error": {"id": "INVALID_CLIENT", "description", "http_code"}}`; Thumbtack
// RFC 6749's, `{"error": "invalid_client"}` (401 with `WWW-Authenticate: Basic`) or `invalid_grant` (400).
import { createHash } from "node:crypto";
import type { FakeReply, ReceivedRequest } from "./fake-server.js";

export type OAuthProviderName = "yelp" | "thumbtack";

/** How each provider's token endpoint takes the client's credentials. */
export type ClientAuthMethod = "post" | "basic";

/** The client registrations the fake knows (the apps' *_OAUTH_CLIENT_ID and _SECRET). */
export const OAUTH_CLIENTS: Record<
  OAuthProviderName,
  { clientId: string; clientSecret: string; auth: ClientAuthMethod }
> = {
  yelp: { clientId: "leadgate-yelp", clientSecret: "yelp-client-secret-0123456789", auth: "post" },
  thumbtack: {
    clientId: "leadgate-thumbtack",
    clientSecret: "thumbtack-client-secret-0123456789",
    auth: "basic",
  },
};

/** The env that points an app's OAuth clients at a fake on `url` (`/{provider}/authorize|token|revoke`). */
export const oauthClientEnv = (url: string) => ({
  YELP_OAUTH_CLIENT_ID: OAUTH_CLIENTS.yelp.clientId,
  YELP_OAUTH_CLIENT_SECRET: OAUTH_CLIENTS.yelp.clientSecret,
  YELP_OAUTH_AUTHORIZE_URL: `${url}/yelp/authorize`,
  YELP_OAUTH_TOKEN_URL: `${url}/yelp/token`,
  THUMBTACK_OAUTH_CLIENT_ID: OAUTH_CLIENTS.thumbtack.clientId,
  THUMBTACK_OAUTH_CLIENT_SECRET: OAUTH_CLIENTS.thumbtack.clientSecret,
  THUMBTACK_OAUTH_AUTHORIZE_URL: `${url}/thumbtack/authorize`,
  THUMBTACK_OAUTH_TOKEN_URL: `${url}/thumbtack/token`,
  THUMBTACK_OAUTH_REVOKE_URL: `${url}/thumbtack/revoke`,
});

/** The client credentials a token or revoke request carried, and how. */
export interface PresentedClient {
  via: ClientAuthMethod | "both" | "none";
  clientId?: string;
  clientSecret?: string;
}

/** What the client sent: HTTP Basic (RFC 6749 2.3.1: each part form-urlencoded) and/or form fields. */
export function presentedClient(request: ReceivedRequest): PresentedClient {
  const form = new URLSearchParams(request.body);
  const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? "");
  const inBody = form.has("client_secret");
  if (basic) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const unescape = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
    return {
      via: inBody ? "both" : "basic",
      clientId: unescape(colon < 0 ? decoded : decoded.slice(0, colon)),
      clientSecret: colon < 0 ? undefined : unescape(decoded.slice(colon + 1)),
    };
  }
  if (inBody) {
    return {
      via: "post",
      clientId: form.get("client_id") ?? undefined,
      clientSecret: form.get("client_secret")!,
    };
  }
  return { via: "none", clientId: form.get("client_id") ?? undefined };
}

/** What an issued code stands for. */
export interface IssuedCode<Grant> {
  provider: OAuthProviderName;
  redirectUri: string;
  codeChallenge: string;
  grant: Grant;
}

type Refusal = "invalid_client" | "invalid_grant" | "invalid_request";

/** A refusal as `provider`'s token endpoint words it. */
export function refusal(provider: OAuthProviderName, error: Refusal, description: string): FakeReply {
  const status = error === "invalid_client" ? 401 : 400;
  if (provider === "yelp") {
    return { status, body: { error: { id: error.toUpperCase(), description, http_code: status } } };
  }
  return {
    status,
    headers: error === "invalid_client" ? { "www-authenticate": 'Basic realm="thumbtack"' } : {},
    body: { error, error_description: description },
  };
}

/**
 * The registered clients and the codes issued to them. `Grant` is what a test keeps with a code
 * (the business consented to, the access token it becomes).
 */
export class FakeAuthorizationServer<Grant> {
  private readonly codes = new Map<string, IssuedCode<Grant>>();
  private issued = 0;
  /** Every token and revoke request's client credentials, in order (for tests to assert). */
  readonly presented: (PresentedClient & { provider: OAuthProviderName; path: string })[] = [];

  /**
   * `GET /{provider}/authorize`: a 400 page for a request a real server refuses; else, with the
   * owner's consent, the redirect back with a code that stands for `grant` (`grant` undefined: the
   * owner denied, `error=access_denied`).
   */
  authorize(provider: OAuthProviderName, url: URL, grant: Grant | undefined): FakeReply {
    const query = url.searchParams;
    const problem = this.authorizeProblem(provider, query);
    if (problem) return { status: 400, text: `<html><body>OAuth error: ${problem}</body></html>` };
    const back = new URL(query.get("redirect_uri")!);
    back.searchParams.set("state", query.get("state") ?? "");
    if (grant === undefined) {
      back.searchParams.set("error", "access_denied");
    } else {
      const code = `code-${provider}-${++this.issued}`;
      this.codes.set(code, {
        provider,
        redirectUri: query.get("redirect_uri")!,
        codeChallenge: query.get("code_challenge")!,
        grant,
      });
      back.searchParams.set("code", code);
    }
    return { status: 302, headers: { location: back.toString() } };
  }

  /**
   * A token or revoke request's client authentication, recorded: the refusal when it is not the
   * registered client authenticating as `provider` expects, else undefined.
   */
  checkClient(provider: OAuthProviderName, request: ReceivedRequest): FakeReply | undefined {
    const presented = presentedClient(request);
    this.presented.push({ ...presented, provider, path: request.path });
    const client = OAUTH_CLIENTS[provider];
    if (presented.via !== client.auth) {
      return refusal(
        provider,
        "invalid_client",
        `client authentication must be ${client.auth === "basic" ? "HTTP Basic" : "client_id and client_secret in the body"}`,
      );
    }
    if (presented.clientId !== client.clientId || presented.clientSecret !== client.clientSecret) {
      return refusal(provider, "invalid_client", "unknown client or wrong secret");
    }
    return undefined;
  }

  /**
   * `grant_type=authorization_code` after checkClient: the code's grant, used up, or the refusal
   * (unknown, used or another provider's code; redirect_uri not the authorize request's; PKCE).
   */
  redeem(provider: OAuthProviderName, form: URLSearchParams): { grant: Grant } | { refused: FakeReply } {
    const code = form.get("code") ?? "";
    const issued = this.codes.get(code);
    if (!issued || issued.provider !== provider) {
      return { refused: refusal(provider, "invalid_grant", "unknown or used code") };
    }
    if (form.get("redirect_uri") !== issued.redirectUri) {
      return {
        refused: refusal(provider, "invalid_grant", "redirect_uri differs from the authorize request's"),
      };
    }
    const verifier = form.get("code_verifier") ?? "";
    if (createHash("sha256").update(verifier).digest("base64url") !== issued.codeChallenge) {
      return {
        refused: refusal(provider, "invalid_grant", "code_verifier does not match the code_challenge"),
      };
    }
    this.codes.delete(code);
    return { grant: issued.grant };
  }

  private authorizeProblem(provider: OAuthProviderName, query: URLSearchParams): string | undefined {
    if (query.get("client_id") !== OAUTH_CLIENTS[provider].clientId) return "unknown client_id";
    if (query.get("response_type") !== "code") return "response_type must be code";
    const redirect = query.get("redirect_uri") ?? "";
    if (!URL.canParse(redirect) || !new URL(redirect).pathname.endsWith(`/oauth/${provider}/callback`)) {
      return "redirect_uri is not the client's callback";
    }
    if (
      query.get("code_challenge_method") !== "S256" ||
      !/^[\w-]{43}$/.test(query.get("code_challenge") ?? "")
    ) {
      return "PKCE: code_challenge with code_challenge_method S256 required";
    }
    return undefined;
  }
}
