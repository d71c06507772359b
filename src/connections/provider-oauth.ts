// The OAuth 2 client of each provider (api.md "Connecting provider accounts"), built on oauth4webapi:
// the authorize URL with PKCE, the code exchange and the refresh. Tokens leave here only inside a
// TokenSet; no error message carries one.
import { Inject, Injectable } from "@nestjs/common";
import * as oauth from "oauth4webapi";
import { AppError } from "../common/app-error.js";
import type { OAuthClientConfig } from "../config/config.js";
import { CONFIG, type HttpConfig, type JobsConfig, type OAuthConfig } from "../config/sections.js";
import { capabilities } from "../providers/capabilities.js";
import { type Provider, PROVIDERS } from "../providers/provider-event.js";

/** The providers whose accounts are connected with OAuth (their capability `oauth`; their plugin declares the endpoints). */
export type OAuthProvider = Provider;
export const OAUTH_PROVIDERS: readonly OAuthProvider[] = PROVIDERS.filter(
  (provider) => capabilities(provider).oauth,
);

export function isOAuthProvider(value: string): value is OAuthProvider {
  return (OAUTH_PROVIDERS as readonly string[]).includes(value);
}

/** What a token endpoint granted, as stored (encrypted) in `connections.credentials`. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** ISO 8601; absent when the provider did not say (`expires_in` missing). */
  expiresAt?: string;
  scopes: string[];
}

/** The token endpoint failed or answered something that is not a token (api.md `token_exchange_failed`). */
export class TokenExchangeFailed extends Error {
  constructor(readonly reason: string) {
    super(`token exchange failed: ${reason}`);
  }
}

/** How a provider's token endpoint takes the client's credentials (its capability `oauth.clientAuth`). */
function clientAuth(provider: OAuthProvider, secret: string): oauth.ClientAuth {
  const how = capabilities(provider).oauth;
  return how && how.clientAuth === "basic" ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
}

@Injectable()
export class ProviderOAuth {
  constructor(
    @Inject(CONFIG.oauth) private readonly config: OAuthConfig,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
    @Inject(CONFIG.jobs) private readonly jobs: JobsConfig,
  ) {}

  /** The provider's client registration; `501 oauth_not_configured` without a client id. */
  client(provider: OAuthProvider): OAuthClientConfig {
    const client = this.config.oauth[provider];
    if (!client) {
      throw new AppError(
        501,
        "oauth_not_configured",
        `OAuth is not configured for ${provider}: set ${provider.toUpperCase()}_OAUTH_CLIENT_ID and _CLIENT_SECRET.`,
      );
    }
    return client;
  }

  /** Whether the provider has a client registration (OAUTH client id set). */
  configured(provider: OAuthProvider): boolean {
    return this.config.oauth[provider] !== undefined;
  }

  /** `${PUBLIC_BASE_URL}/oauth/{provider}/callback`: the redirect URI registered with the provider. */
  redirectUri(provider: OAuthProvider): string {
    return `${this.http.publicBaseUrl}/oauth/${provider}/callback`;
  }

  /** A fresh state and PKCE verifier (S256). */
  static newSecrets(): { state: string; codeVerifier: string } {
    return { state: oauth.generateRandomState(), codeVerifier: oauth.generateRandomCodeVerifier() };
  }

  /** Where the owner's browser goes to grant access. */
  async authorizeUrl(provider: OAuthProvider, state: string, codeVerifier: string): Promise<string> {
    const client = this.client(provider);
    const url = new URL(client.authorizeUrl);
    url.searchParams.set("client_id", client.clientId);
    url.searchParams.set("redirect_uri", this.redirectUri(provider));
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", client.scopes.join(" "));
    url.searchParams.set("state", state);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    return url.toString();
  }

  /**
   * Exchanges the callback's code. The caller has matched the state already (it found the attempt
   * by it), so only `code` is passed on: an `iss` parameter is not compared (each provider has its
   * own callback path, which keeps an authorization server from answering for another).
   */
  async exchangeCode(provider: OAuthProvider, code: string, codeVerifier: string): Promise<TokenSet> {
    const { as, client, auth, options, config } = this.parts(provider);
    try {
      const parameters = oauth.validateAuthResponse(
        as,
        client,
        new URLSearchParams({ code }),
        oauth.skipStateCheck,
      );
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        parameters,
        this.redirectUri(provider),
        codeVerifier,
        options,
      );
      return tokenSet(await oauth.processAuthorizationCodeResponse(as, client, response), config.scopes);
    } catch (error) {
      throw new TokenExchangeFailed(reasonOf(error));
    }
  }

  /**
   * Presents `refreshToken` once. `invalid_grant` (RFC 6749's shape, or Yelp's
   * `{"error": {"id": "INVALID_GRANT"}}`) is `InvalidGrant`: the grant is gone, a person must consent
   * again; anything else is `TokenExchangeFailed` (worth trying again later).
   */
  async refresh(provider: OAuthProvider, refreshToken: string, scopes: string[]): Promise<TokenSet> {
    const { as, client, auth, options } = this.parts(provider);
    let response: Response;
    try {
      response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, options);
    } catch (error) {
      throw new TokenExchangeFailed(reasonOf(error));
    }
    if (response.status === 400 || response.status === 401) {
      if (await isInvalidGrant(response.clone())) throw new InvalidGrant();
    }
    try {
      return tokenSet(await oauth.processRefreshTokenResponse(as, client, response), scopes);
    } catch (error) {
      throw new TokenExchangeFailed(reasonOf(error));
    }
  }

  /**
   * Revokes the grant (RFC 7009) where the provider has a revoke endpoint (Thumbtack's
   * THUMBTACK_OAUTH_REVOKE_URL): "revoked", "no_endpoint", or `TokenExchangeFailed`.
   */
  async revoke(provider: OAuthProvider, token: string, hint: "refresh_token" | "access_token") {
    const { as, client, auth, options, config } = this.parts(provider);
    if (config.revokeUrl === undefined) return "no_endpoint" as const;
    try {
      const response = await oauth.revocationRequest(as, client, auth, token, {
        ...options,
        additionalParameters: { token_type_hint: hint },
      });
      await oauth.processRevocationResponse(response);
      return "revoked" as const;
    } catch (error) {
      throw new TokenExchangeFailed(reasonOf(error));
    }
  }

  private parts(provider: OAuthProvider) {
    const config = this.client(provider);
    const as: oauth.AuthorizationServer = {
      issuer: new URL(config.tokenUrl).origin,
      authorization_endpoint: config.authorizeUrl,
      token_endpoint: config.tokenUrl,
      revocation_endpoint: config.revokeUrl,
    };
    const client: oauth.Client = { client_id: config.clientId };
    const options = {
      // The operator chose the URL; tests point it at loopback over http.
      [oauth.allowInsecureRequests]: new URL(config.tokenUrl).protocol === "http:",
      signal: AbortSignal.timeout(this.jobs.sideEffectTimeoutMs),
    };
    return { as, client, auth: clientAuth(provider, config.clientSecret), options, config };
  }
}

/** The provider refused the refresh token: the grant is revoked, expired or was presented twice. */
export class InvalidGrant extends Error {
  constructor() {
    super("invalid_grant");
  }
}

async function isInvalidGrant(response: Response): Promise<boolean> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return false;
  }
  if (body === null || typeof body !== "object") return false;
  const error = (body as { error?: unknown }).error;
  const code = typeof error === "string" ? error : (error as { id?: unknown } | null)?.id;
  return typeof code === "string" && code.toLowerCase() === "invalid_grant";
}

/** The stored form of a token answer; scopes default to those asked for when the answer omits them. */
function tokenSet(answer: oauth.TokenEndpointResponse, requested: string[]): TokenSet {
  const set: TokenSet = {
    accessToken: answer.access_token,
    scopes: answer.scope ? answer.scope.split(" ").filter(Boolean) : requested,
  };
  if (answer.refresh_token) set.refreshToken = answer.refresh_token;
  if (typeof answer.expires_in === "number") {
    set.expiresAt = new Date(Date.now() + answer.expires_in * 1000).toISOString();
  }
  return set;
}

/** A short reason for logs: the library's error code or the provider's error code, never a body. */
function reasonOf(error: unknown): string {
  if (error instanceof oauth.ResponseBodyError) return error.error;
  if (error instanceof oauth.OperationProcessingError) return error.code ?? "invalid_response";
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return "timeout";
  return "unreachable";
}
