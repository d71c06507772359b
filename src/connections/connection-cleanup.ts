// A disconnect's clean-up (docs/providers.md): `DELETE /admin/connections/{id}` disables the
// connection at once, marks its clean-up due (`cleanup_due_at`) and, for a connection Leadgate
// registered, makes a provider-sync `remove` job (src/jobs/provider-sync.ts) that removes the
// provider-side webhook or subscription although the connection is disabled. The worker's clean-up
// then revokes the grant where the provider offers a revoke endpoint and deletes the tokens, in that
// order, and only once no provider-sync job of the connection is on its way any more (the removal
// needs the tokens; a removal that ended dead leaves the webhook, whose deliveries answer 410).
// A failing step is recorded (`oauth_last_error`) and retried later; it never touches the disable.
import { Injectable, Logger } from "@nestjs/common";
import { SecretBox } from "../crypto/secret-box.js";
import { secretPlace } from "../crypto/stored-secrets.js";
import { ConnectionSubstates, type DueCleanUp } from "./connection-substates.js";
import type { ProviderCredentials } from "./lifecycle/connection.js";
import { isOAuthProvider, ProviderOAuth, TokenExchangeFailed } from "./provider-oauth.js";

/** A failed clean-up is tried again after this long. */
const RETRY_AFTER_SECONDS = 300;
/** Clean-ups taken per pass. */
const BATCH = 20;

@Injectable()
export class ConnectionCleanup {
  private readonly logger = new Logger("connection-cleanup");

  constructor(
    private readonly substates: ConnectionSubstates,
    private readonly box: SecretBox,
    private readonly oauth: ProviderOAuth,
  ) {}

  /** Runs the due clean-ups; answers how many finished. Any number of workers may run it at once. */
  async run(): Promise<number> {
    // Taking one moves its due time forward: another worker skips it, and a worker that dies
    // mid-way leaves it for a retry. Platform-wide, then scoped by tenant and id.
    const rows = await this.substates.takeCleanUps(RETRY_AFTER_SECONDS, BATCH);
    let done = 0;
    for (const due of rows) {
      if (await this.cleanUp(due)) done += 1;
    }
    return done;
  }

  private async cleanUp(due: DueCleanUp): Promise<boolean> {
    const log = { tenantId: due.tenantId, connectionId: due.id, provider: due.provider };
    // 1. The provider-side webhook or subscription: removed by its provider-sync job (run picks a
    //    clean-up only once that job is done).
    // 2. The grant, where the provider can revoke it.
    if (due.credentials !== null && isOAuthProvider(due.provider) && this.oauth.configured(due.provider)) {
      let credentials: ProviderCredentials | undefined;
      try {
        credentials = this.box.open<ProviderCredentials>(due.credentials, secretPlace("credentials", due.id));
      } catch {
        this.logger.warn({ msg: "tokens unreadable: deleted without revoking", ...log });
      }
      if (credentials) {
        try {
          const revoked = await this.oauth.revoke(
            due.provider,
            credentials.refreshToken ?? credentials.accessToken,
            credentials.refreshToken ? "refresh_token" : "access_token",
          );
          if (revoked === "no_endpoint") {
            this.logger.log({ msg: "no revoke endpoint: the grant was not revoked, tokens deleted", ...log });
          }
        } catch (error) {
          const reason = error instanceof TokenExchangeFailed ? error.reason : "internal";
          await this.substates.recordCleanUpFailure(due);
          this.logger.warn({ msg: "revoking the grant failed; retried later", ...log, reason });
          return false;
        }
      }
    }
    // 3. The tokens.
    await this.substates.finishCleanUp(due);
    this.logger.log({ msg: "disconnected: tokens deleted", ...log });
    return true;
  }
}
