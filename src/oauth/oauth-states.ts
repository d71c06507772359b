// The `state` of the OAuth flow: the one credential of the callback (it has no API key). Leadgate
// signs each state it issues (SignedValues), and a callback whose state opens no attempt is a failed
// authentication, counted against the client IP's PREAUTH_FAILURE_LIMIT like a wrong webhook secret
// or an unknown API key. So a forged state costs no database query once its IP is over budget, and
// a valid one is never refused (only failures are counted, and a signed state is always looked up).
import { Injectable } from "@nestjs/common";
import { PreauthBudget } from "../auth/preauth-budget.js";
import { AppError } from "../common/app-error.js";
import { ProviderOAuth, type OAuthProvider } from "../connections/provider-oauth.js";
import { SignedValues } from "../crypto/signed-values.js";
import { type ConsumedAttempt, OAuthAttemptsRepository } from "./oauth-attempts.repository.js";

const PURPOSE = "oauth-state";

export const invalidState = () =>
  new AppError(
    400,
    "invalid_oauth_state",
    "This authorization link is unknown, already used or expired (10 minutes): start connecting again.",
  );

@Injectable()
export class OAuthStates {
  constructor(
    private readonly signed: SignedValues,
    private readonly attempts: OAuthAttemptsRepository,
    private readonly budget: PreauthBudget,
  ) {}

  /** A new flow's state (signed) and PKCE verifier. */
  issue(): { state: string; codeVerifier: string } {
    const { state, codeVerifier } = ProviderOAuth.newSecrets();
    return { state: this.signed.sign(PURPOSE, state), codeVerifier };
  }

  /**
   * Consumes the attempt `state` opens, once. No attempt (a forged, reused or expired state, or
   * none) ⇒ `400 invalid_oauth_state`, counted for `ip`; beyond its budget `429 rate_limited`, and a
   * state Leadgate never signed is then refused before any query. An unsigned state is still looked
   * up while the IP is within budget: states issued before states were signed (a flow under way
   * during the upgrade, at most 10 minutes old) keep working.
   */
  async consume(provider: OAuthProvider, state: unknown, ip: string): Promise<ConsumedAttempt> {
    if (typeof state !== "string" || state === "") throw await this.budget.failed(ip, invalidState());
    if (!this.signed.verify(PURPOSE, state) && this.budget.exhausted(ip)) throw this.budget.refusal(ip);
    const attempt = await this.attempts.consume(provider, state);
    if (!attempt) throw await this.budget.failed(ip, invalidState());
    return attempt;
  }
}
