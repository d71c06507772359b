// The scheduled refresh sweep: tokens of idle connections are refreshed before they
// lapse, so the first reply after a quiet night is not slowed by a refresh. It uses the same
// ProviderTokens path as the jobs (the same margin, the same lease), so a sweep and a job racing for
// one connection still present its refresh token once; any number of worker replicas may sweep.
// The same timer runs the clean-up of disconnected connections (revoke, delete the tokens) and
// deletes OAuth attempts a day past their expiry.
import { CONFIG, type OAuthConfig } from "../config/sections.js";
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { classify } from "../common/outbound/errors.js";
import { Periodic } from "../common/periodic.js";
import { ProviderTokens } from "../connections/provider-tokens.js";
import { ConnectionCleanup } from "../connections/connection-cleanup.js";
import { PrismaService } from "../database/prisma.service.js";
import { OAUTH_PROVIDERS } from "./provider-oauth.js";

/** How often the sweep looks; a token is due within OAUTH_REFRESH_MARGIN_SECONDS (default 300). */
const SWEEP_INTERVAL_MS = 60_000;
/** Connections refreshed per sweep, oldest expiry first; the next sweep takes the rest. */
const BATCH = 50;

@Injectable()
export class TokenRefreshSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("token-sweep");
  private readonly sweeps = new Periodic(() =>
    Promise.all([this.sweep(), this.cleanUp(), this.pruneAttempts()]),
  );

  constructor(
    private readonly prisma: PrismaService,
    private readonly tokens: ProviderTokens,
    private readonly cleanup: ConnectionCleanup,
    @Inject(CONFIG.oauth) private readonly config: OAuthConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(SWEEP_INTERVAL_MS);
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /**
   * Deletes OAuth attempts a day past their expiry (used or not: a used one already did its work,
   * and an expired one can no longer be used); answers how many.
   */
  async pruneAttempts(): Promise<number> {
    try {
      // Platform-wide by nature: the expiry, not a tenant, selects the rows.
      const { rowCount } = await this.prisma.pool.query(
        "DELETE FROM oauth_attempts WHERE expires_at < now() - interval '1 day'",
      );
      return rowCount ?? 0;
    } catch (error) {
      this.logger.warn({
        msg: "pruning OAuth attempts failed; the next pass retries",
        errorCode: classify(error).code,
      });
      return 0;
    }
  }

  /** Disconnected connections' clean-up; a failure is logged and retried by a later pass. */
  async cleanUp(): Promise<void> {
    try {
      await this.cleanup.run();
    } catch (error) {
      this.logger.warn({ msg: "connection clean-up pass failed", errorCode: classify(error).code });
    }
  }

  /** Refreshes the due tokens of active, connected connections; answers how many were looked at. */
  async sweep(): Promise<number> {
    // Platform-wide by nature (no tenant yet); each refresh below is scoped by tenant and id.
    // Candidates expire within the margin; ProviderTokens decides (half the lifetime may be less).
    let rows: { id: string; tenantId: string; provider: string }[];
    try {
      ({ rows } = await this.prisma.pool.query<{ id: string; tenantId: string; provider: string }>(
        `SELECT id, tenant_id AS "tenantId", provider FROM connections
       WHERE status = 'active' AND oauth_status = 'connected' AND provider = ANY($3::text[])
         AND token_expires_at < now() + make_interval(secs => $1::double precision)
       ORDER BY token_expires_at LIMIT $2`,
        [this.config.oauthRefreshMarginSeconds, BATCH, OAUTH_PROVIDERS],
      ));
    } catch (error) {
      this.logger.warn({ msg: "token sweep failed; the next one retries", errorCode: classify(error).code });
      return 0;
    }
    for (const connection of rows) {
      try {
        await this.tokens.current(connection);
      } catch (error) {
        // Recorded on the connection by ProviderTokens (invalid_grant, refresh_failed); next sweep retries.
        this.logger.warn({
          msg: "sweep could not refresh a token",
          tenantId: connection.tenantId,
          connectionId: connection.id,
          errorCode: classify(error).code,
        });
      }
    }
    return rows.length;
  }
}
