// Managed provider tokens (docs/design.md invariant 9): before a provider call, an access token within
// the refresh margin is refreshed first, and a refresh token is presented exactly once however many
// jobs and worker processes need the token at the same moment.
//
// Serialization: a lease row, not an advisory lock. The connection row carries
// `refresh_lease_owner` / `refresh_lease_until`; one autocommit UPDATE takes the lease when it is
// free or expired, so no pooled connection is held while the token endpoint answers (an advisory
// lock would need a connection of its own per waiting process for that whole time), and a process
// that dies mid-refresh frees it by expiry. The lease outlasts the token call's own timeout, and the
// new pair is stored only by the lease's holder (`WHERE refresh_lease_owner = me`), before anyone
// uses the new access token. Waiters poll the row until the token changes.
//
// A crash between the provider's answer and our commit loses the new refresh token, and rotating
// providers (Yelp v3, Thumbtack) revoke the family when the old one is presented again: the next
// refresh gets invalid_grant and the connection ends in reauthorization_required (never a loop).
import { CONFIG, type JobsConfig, type OAuthConfig } from "../config/sections.js";
import { randomUUID } from "node:crypto";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { CredentialError, PermanentError, RetryableError } from "../common/outbound/errors.js";
import { SecretBox } from "../crypto/secret-box.js";
import { secretPlace } from "../crypto/stored-secrets.js";
import { ConnectionStore } from "./connection-store.js";
import { ConnectionSubstates, type TokenRow } from "./connection-substates.js";
import type { OAuthStatus, ProviderCredentials } from "./lifecycle/connection.js";
import { InvalidGrant, isOAuthProvider, ProviderOAuth, TokenExchangeFailed } from "./provider-oauth.js";

export interface TokenOwner {
  id: string;
  tenantId: string;
  provider: string;
}

interface Stored {
  credentials: ProviderCredentials;
  expiresAt: Date | null;
  issuedAt: Date | null;
  oauthStatus: OAuthStatus;
}

const POLL_MS = 100;

const reauthorize = () => new CredentialError("invalid_grant");

@Injectable()
export class ProviderTokens {
  private readonly logger = new Logger("provider-tokens");
  private readonly leaseMs: number;

  constructor(
    private readonly store: ConnectionStore,
    private readonly substates: ConnectionSubstates,
    private readonly box: SecretBox,
    private readonly oauth: ProviderOAuth,
    @Inject(CONFIG.oauth) private readonly config: OAuthConfig,
    @Inject(CONFIG.jobs) jobs: JobsConfig,
  ) {
    // Longer than the token call may take (it is aborted at the side-effect timeout).
    this.leaseMs = jobs.sideEffectTimeoutMs + 5_000;
  }

  /** The access token to call the provider with now (undefined: none stored); refreshed first when due. */
  async current(owner: TokenOwner): Promise<string | undefined> {
    const stored = await this.read(owner);
    if (!stored) return undefined;
    if (stored.oauthStatus === "reauthorization_required") throw reauthorize();
    if (!this.refreshable(owner, stored) || !this.due(stored)) return stored.credentials.accessToken;
    return this.refresh(owner, stored.credentials.accessToken);
  }

  /**
   * After the provider answered 401 to `failed`: the token to retry with once, or undefined (no
   * retry). Refreshes only if `failed` is still the stored token; if another job refreshed meanwhile,
   * the stored token is the answer.
   */
  async afterUnauthorized(owner: TokenOwner, failed: string): Promise<string | undefined> {
    const stored = await this.read(owner);
    if (!stored) return undefined;
    if (stored.credentials.accessToken !== failed) return stored.credentials.accessToken;
    if (!this.refreshable(owner, stored)) return undefined;
    return this.refresh(owner, failed);
  }

  /** Less than the margin left: the smaller of OAUTH_REFRESH_MARGIN_SECONDS and half the lifetime. */
  private due(stored: Stored): boolean {
    if (stored.expiresAt === null) return false;
    const lifetime =
      stored.issuedAt === null ? Infinity : stored.expiresAt.getTime() - stored.issuedAt.getTime();
    const margin = Math.min(this.config.oauthRefreshMarginSeconds * 1000, lifetime / 2);
    return stored.expiresAt.getTime() - Date.now() < margin;
  }

  private refreshable(owner: TokenOwner, stored: Stored): boolean {
    return (
      isOAuthProvider(owner.provider) &&
      this.config.oauth[owner.provider] !== undefined &&
      stored.credentials.refreshToken !== undefined
    );
  }

  /** A token other than `seen`: refreshed by this call under the lease, or by whoever holds it. */
  private async refresh(owner: TokenOwner, seen: string): Promise<string> {
    const me = randomUUID();
    const deadline = Date.now() + 2 * this.leaseMs;
    for (;;) {
      const leased = await this.lease(owner, me);
      if (leased) return this.refreshHolding(owner, me, seen, leased);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const now = await this.read(owner);
      if (!now) throw new CredentialError("no_credentials");
      if (now.credentials.accessToken !== seen) return now.credentials.accessToken;
      if (now.oauthStatus === "reauthorization_required") throw reauthorize();
      if (Date.now() > deadline) throw new RetryableError("token_refresh_busy");
    }
  }

  private async refreshHolding(owner: TokenOwner, me: string, seen: string, held: Stored): Promise<string> {
    const provider = owner.provider;
    if (!isOAuthProvider(provider)) throw new Error(`no OAuth for ${provider}`);
    // Refreshed by someone else between our read and our lease, or the grant is gone already.
    if (held.credentials.accessToken !== seen || held.oauthStatus === "reauthorization_required") {
      await this.release(owner, me);
      if (held.oauthStatus === "reauthorization_required") throw reauthorize();
      return held.credentials.accessToken;
    }
    const log = { connectionId: owner.id, tenantId: owner.tenantId, provider };
    try {
      const next = await this.oauth.refresh(
        provider,
        held.credentials.refreshToken!,
        held.credentials.scopes ?? [],
      );
      const credentials: ProviderCredentials = {
        ...next,
        // A provider that does not rotate keeps the refresh token it issued.
        refreshToken: next.refreshToken ?? held.credentials.refreshToken,
      };
      const stored = await this.substates.storeRefreshedToken(owner, me, {
        sealed: this.box.seal(credentials, secretPlace("credentials", owner.id)),
        expiresAt: credentials.expiresAt ?? null,
        scopes: credentials.scopes ?? [],
      });
      if (!stored) {
        this.logger.error({ msg: "refreshed token not stored: the refresh lease expired first", ...log });
      } else {
        this.logger.log({ msg: "provider token refreshed", ...log });
      }
      return credentials.accessToken;
    } catch (error) {
      if (error instanceof InvalidGrant) {
        await this.store.requireReauthorization(owner, me);
        this.logger.warn({
          msg: "refresh refused: reauthorization required",
          ...log,
          errorCode: "invalid_grant",
        });
        throw reauthorize();
      }
      await this.substates.recordRefreshFailure(owner, me);
      const reason = error instanceof TokenExchangeFailed ? error.reason : "internal";
      this.logger.warn({ msg: "token refresh failed", ...log, errorCode: "token_refresh_failed", reason });
      throw new RetryableError("token_refresh_failed");
    }
  }

  /** Takes the refresh lease when it is free or expired: the row as it is now, or undefined. */
  private async lease(owner: TokenOwner, me: string): Promise<Stored | undefined> {
    const row = await this.substates.takeRefreshLease(owner, me, this.leaseMs);
    return row ? this.stored(owner, row) : undefined;
  }

  private release(owner: TokenOwner, me: string): Promise<void> {
    return this.substates.releaseRefreshLease(owner, me);
  }

  private async read(owner: TokenOwner): Promise<Stored | undefined> {
    const row = await this.substates.readTokens(owner);
    return row ? this.stored(owner, row) : undefined;
  }

  private stored(owner: TokenOwner, row: TokenRow): Stored {
    let credentials: ProviderCredentials;
    try {
      credentials = this.box.open<ProviderCredentials>(row.credentials, secretPlace("credentials", owner.id));
    } catch {
      throw new PermanentError("secrets_unreadable"); // as in the job context: fix the key or data, then replay
    }
    return { credentials, expiresAt: row.expiresAt, issuedAt: row.issuedAt, oauthStatus: row.oauthStatus };
  }
}
