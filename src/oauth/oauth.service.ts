// Connecting a provider account with the OAuth 2 authorization code flow (api.md "Connecting
// provider accounts"): start (an attempt, the authorize URL), reconnect, and the callback that
// consumes the attempt once, exchanges the code, proves the grant reaches the account, and only then
// writes the connection and its audit row in one transaction.
import { ClientsRepository } from "../clients/clients.repository.js";
import { CONFIG, type HttpConfig, type OAuthConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { AuditRepository } from "../audit/audit.repository.js";
import type { StartOAuthBody } from "./oauth.dto.js";
import { TenantsRepository } from "../tenants/tenants.repository.js";
import { notFound } from "../common/id.pipe.js";
import { type Principal, type TenantScope, tenantWhere } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { given } from "../common/validation.js";
import {
  connectionSettingsErrors,
  delayErrors,
  refuse,
  storedSizeErrors,
} from "../replies/reply-settings-check.js";
import { effectiveSettings } from "../replies/reply-settings.js";
import { DestinationGuard } from "../common/outbound/destination-guard.js";
import { AccountAccessCheck, ProviderUnavailable } from "../connections/account-access.js";
import {
  type ConnectionSettings,
  type InboundAuthConfig,
  settingsWithoutNulls,
} from "../connections/lifecycle/connection.js";
import {
  ConnectionsService,
  credentialColumns,
  generateCredentials,
} from "../connections/connections.service.js";
import {
  isOAuthProvider,
  type OAuthProvider,
  ProviderOAuth,
  TokenExchangeFailed,
  type TokenSet,
} from "../connections/provider-oauth.js";
import { SecretBox } from "../crypto/secret-box.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions, type Tx } from "../database/transactions.js";
import type { EnqueueableJob } from "../jobs/job-queue.js";
import { JobQueue } from "../jobs/job-queue.js";
import { ProviderSyncJobs } from "../connections/provider-sync.js";
import { ConnectionStore } from "../connections/connection-store.js";
import { capabilities, registersWebhook } from "../providers/capabilities.js";
import { ApiKeysRepository } from "../auth/api-keys.repository.js";
import { UsersRepository } from "../users/users.repository.js";
import { type ConsumedAttempt, OAuthAttemptsRepository } from "./oauth-attempts.repository.js";
import { invalidState, OAuthStates } from "./oauth-states.js";
import type { ConnectionFields } from "./oauth.dto.js";

/** The `error=` codes of a callback that ends without a connection (api.md). */
export type CallbackError =
  | "access_denied"
  | "authorization_failed"
  | "token_exchange_failed"
  | "account_not_accessible"
  | "account_taken"
  | "provider_unavailable"
  | "connection_disabled"
  | "limit_reached";

/** How a callback ended: where the browser goes (or what the page says). */
export type CallbackOutcome = { returnUrl: string | null } & (
  { status: "connected"; connectionId: string } | { status: "error"; error: CallbackError }
);

/** Failures that end a callback with `status=error` and nothing written. */
class CallbackFailed extends Error {
  constructor(readonly code: CallbackError) {
    super(code);
  }
}

@Injectable()
export class OAuthService {
  private readonly logger = new Logger("oauth");

  constructor(
    @Inject(CONFIG.oauth) private readonly config: OAuthConfig,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
    private readonly users: UsersRepository,
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly attempts: OAuthAttemptsRepository,
    private readonly states: OAuthStates,
    private readonly keys: ApiKeysRepository,
    private readonly oauth: ProviderOAuth,
    private readonly access: AccountAccessCheck,
    private readonly connections: ConnectionsService,
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
    private readonly audit: AuditRepository,
    private readonly destinations: DestinationGuard,
    private readonly box: SecretBox,
    private readonly queue: JobQueue,
    private readonly syncs: ProviderSyncJobs,
    private readonly connectionStore: ConnectionStore,
  ) {}

  /** `POST /admin/connections/oauth`: a new connection once the owner has granted access. */
  async start(by: Principal, body: StartOAuthBody) {
    this.oauth.client(body.provider); // 501 before anything else
    const returnUrl = this.checkReturnUrl(body.returnUrl);
    const tenantId = await this.tenants.tenantOfNew(by, body.tenantId, "connects an account");
    await this.connections.makeRoom(this.prisma, tenantId); // 422 before the owner is sent away
    const inboundAuth = checkInboundAuth(body.provider, body.inboundAuth);
    const named = given(body.settings ?? {});
    refuse(connectionSettingsErrors(body.provider, named));
    const settings = settingsWithoutNulls(named);
    refuse(storedSizeErrors(settings, "settings"));
    // The client it will belong to (another tenant's or unknown: 404), and what it inherits there.
    const clientId = await this.clients.clientFor(this.prisma, tenantId, body.clientId);
    const defaults = await this.clients.inherited(this.prisma, clientId);
    refuse(delayErrors(effectiveSettings(settings, defaults), named, "settings"));
    await this.destinations.checkSetting("settings.crmDestination.url", settings.crmDestination?.url);
    return this.begin(by, tenantId, body.provider, null, returnUrl, {
      externalAccountId: body.externalAccountId,
      displayName: body.displayName,
      clientId,
      inboundAuth,
      settings,
    });
  }

  /** `POST /admin/connections/{id}/reconnect`: consent again; the connection keeps its id and history. */
  async reconnect(by: Principal, scope: TenantScope, id: string, body: { returnUrl?: string }) {
    const row = await this.prisma.connection.findFirst({ where: { ...tenantWhere(scope), id } });
    if (!row) throw notFound("connection");
    if (!isOAuthProvider(row.provider)) {
      throw new AppError(409, "oauth_not_supported", `${row.provider} connections have no OAuth grant.`);
    }
    if (row.status === "disabled") {
      throw new AppError(409, "connection_disabled", "The connection is disabled: connect the account anew.");
    }
    this.oauth.client(row.provider);
    const returnUrl = this.checkReturnUrl(body.returnUrl);
    return this.begin(by, row.tenantId, row.provider, row.id, returnUrl, {
      externalAccountId: row.externalAccountId,
      displayName: row.displayName,
      inboundAuth: row.inboundAuth as unknown as InboundAuthConfig,
      settings: row.settings as ConnectionSettings,
    });
  }

  /**
   * `GET /oauth/{provider}/callback` from the client address `ip`. A state that opens no attempt
   * is `400 invalid_oauth_state` (counted against the IP's PREAUTH_FAILURE_LIMIT: OAuthStates), as
   * is one whose API key was revoked before the connection was written; every other failure is an
   * outcome with `status: "error"`, and nothing but the attempt's consumption is written.
   */
  async callback(
    providerName: string,
    query: { code?: unknown; state?: unknown; error?: unknown },
    ip: string,
  ): Promise<CallbackOutcome> {
    if (!isOAuthProvider(providerName)) throw notFound("OAuth provider");
    const provider = providerName;
    this.oauth.client(provider);
    const attempt = await this.states.consume(provider, query.state, ip);
    const returnUrl = attempt.returnUrl;
    try {
      if (query.error !== undefined) {
        throw new CallbackFailed(query.error === "access_denied" ? "access_denied" : "authorization_failed");
      }
      if (typeof query.code !== "string" || query.code === "")
        throw new CallbackFailed("token_exchange_failed");
      const tokens = await this.exchange(attempt, query.code);
      await this.proveAccess(attempt, tokens.accessToken);
      const connectionId = await this.store(attempt, tokens);
      return { returnUrl, status: "connected", connectionId };
    } catch (error) {
      if (!(error instanceof CallbackFailed)) throw error;
      this.logger.warn({
        msg: "oauth callback failed",
        tenantId: attempt.tenantId,
        provider,
        connectionId: attempt.connectionId,
        errorCode: error.code,
      });
      return { returnUrl, status: "error", error: error.code };
    }
  }

  private async begin(
    by: Principal,
    tenantId: string,
    provider: OAuthProvider,
    connectionId: string | null,
    returnUrl: string | null,
    fields: ConnectionFields,
  ) {
    const { state, codeVerifier } = this.states.issue();
    const authorizeUrl = await this.oauth.authorizeUrl(provider, state, codeVerifier);
    const { expiresAt } = await this.attempts.create({
      tenantId,
      apiKeyId: by.keyId,
      userId: by.userId,
      provider,
      connectionId,
      fields,
      returnUrl,
      state,
      codeVerifier,
    });
    return { authorizeUrl, expiresAt };
  }

  private async exchange(attempt: ConsumedAttempt, code: string): Promise<TokenSet> {
    try {
      return await this.oauth.exchangeCode(attempt.provider, code, attempt.codeVerifier);
    } catch (error) {
      if (!(error instanceof TokenExchangeFailed)) throw error;
      this.logger.warn({
        msg: "oauth token exchange failed",
        tenantId: attempt.tenantId,
        provider: attempt.provider,
        reason: error.reason,
      });
      throw new CallbackFailed("token_exchange_failed");
    }
  }

  private async proveAccess(attempt: ConsumedAttempt, accessToken: string): Promise<void> {
    let access;
    try {
      access = await this.access.check(attempt.provider, attempt.fields.externalAccountId, accessToken);
    } catch (error) {
      if (error instanceof ProviderUnavailable) throw new CallbackFailed("provider_unavailable");
      throw error;
    }
    if (access === "not_accessible") throw new CallbackFailed("account_not_accessible");
  }

  /**
   * Creates the connection (or, for a reconnect, replaces its tokens) with its audit row, while
   * the API key that started the attempt is not revoked: a revocation during the callback (after
   * the attempt was consumed) wins or waits, and if it wins nothing is written.
   */
  private async store(attempt: ConsumedAttempt, tokens: TokenSet): Promise<string> {
    const by = { keyId: attempt.apiKeyId, userId: attempt.userId };
    const { connectionId, released } = await this.transactions.run(async (tx) => {
      const stillTrusted =
        attempt.apiKeyId !== null
          ? await this.keys.lockUnrevoked(tx, attempt.apiKeyId)
          : await this.users.lockEnabled(tx, attempt.userId!);
      if (!stillTrusted) {
        this.logger.warn({
          msg: "oauth callback refused: the API key that started it was revoked, or its user disabled",
          tenantId: attempt.tenantId,
          provider: attempt.provider,
          connectionId: attempt.connectionId,
        });
        throw invalidState();
      }
      if (attempt.connectionId === null) {
        let created;
        try {
          created = await this.connections.create(
            attempt.tenantId,
            { provider: attempt.provider, ...attempt.fields, credentials: tokens },
            tx,
          );
        } catch (error) {
          if (error instanceof AppError && error.code === "connection_exists") {
            throw new CallbackFailed("account_taken");
          }
          if (error instanceof AppError && error.code === "limit_reached") {
            throw new CallbackFailed("limit_reached"); // the tenant filled its cap since the start
          }
          throw error;
        }
        await this.audit.record(tx, by, {
          action: "connection.oauth-connect",
          tenantId: attempt.tenantId,
          targetType: "connection",
          targetId: created.connection.id,
          details: { provider: attempt.provider, externalAccountId: attempt.fields.externalAccountId },
        });
        const registration = await this.startRegistration(tx, attempt, created.connection.id);
        return { connectionId: created.connection.id, released: registration };
      }
      let row;
      try {
        row = await this.connectionStore.lock(tx, attempt.tenantId, attempt.connectionId);
      } catch (error) {
        if (error instanceof AppError && error.status === 404)
          throw new CallbackFailed("connection_disabled"); // gone: only a test database deletes rows
        throw error;
      }
      if (!this.connectionStore.may(row, "reconnect")) throw new CallbackFailed("connection_disabled");
      // A credential error ends with the new grant: the store queues the parked jobs again, as on resume.
      const { requeued: released } = await this.connectionStore.apply(
        tx,
        row,
        "reconnect",
        credentialColumns(this.box, attempt.connectionId, tokens),
      );
      await this.audit.record(tx, by, {
        action: "connection.reconnect",
        tenantId: attempt.tenantId,
        targetType: "connection",
        targetId: attempt.connectionId,
        details: { provider: attempt.provider, from: row.status, requeuedJobs: released.length },
      });
      const registration = await this.startRegistration(tx, attempt, attempt.connectionId);
      return { connectionId: attempt.connectionId, released: [...released, ...registration] };
    });
    await this.queue.enqueue(released); // after commit; the dispatcher covers a failure here
    return connectionId;
  }

  /**
   * With the grant stored, Leadgate registers the webhook (a provider-sync job, run after the
   * commit): the registration is `pending` until it ran. An inbound auth the provider cannot be
   * given (Thumbtack custom header) stays `manual`.
   */
  private startRegistration(
    tx: Tx,
    attempt: ConsumedAttempt,
    connectionId: string,
  ): Promise<EnqueueableJob[]> {
    if (!registersWebhook(attempt.provider, attempt.fields.inboundAuth.type)) return Promise.resolve([]);
    return this.syncs.start(tx, { tenantId: attempt.tenantId, connectionId }, "sync");
  }

  /**
   * `returnUrl` must be on PUBLIC_BASE_URL's origin (the console) or on OAUTH_RETURN_URL_ORIGINS:
   * Leadgate sends browsers nowhere else.
   */
  private checkReturnUrl(returnUrl: string | undefined): string | null {
    if (returnUrl === undefined) return null;
    const origin = new URL(returnUrl).origin;
    const own = new URL(this.http.publicBaseUrl).origin;
    if (origin !== own && !this.config.oauthReturnUrlOrigins.includes(origin)) {
      throw new AppError(400, "validation_failed", "Invalid input: returnUrl.", {
        returnUrl: ["its origin must be PUBLIC_BASE_URL's or one of OAUTH_RETURN_URL_ORIGINS"],
      });
    }
    return returnUrl;
  }
}

/** The inbound auth a connection of `provider` will have; checked now, its secrets made by the callback. */
function checkInboundAuth(
  provider: OAuthProvider,
  given: { type: InboundAuthConfig["type"]; headerName?: string; apiKey?: string } | undefined,
): InboundAuthConfig {
  const authTypes = capabilities(provider).inboundAuth;
  const auth = given ?? { type: authTypes[0]! };
  if (!authTypes.includes(auth.type)) {
    throw new AppError(
      400,
      "validation_failed",
      `inboundAuth.type ${auth.type} is not available for ${provider}.`,
      {
        "inboundAuth.type": [`must be one of ${authTypes.join(", ")}`],
      },
    );
  }
  const checked = generateCredentials(auth); // refuses a bad header name; these secrets are dropped
  return checked.type === "header"
    ? { type: "header", headerName: checked.headerName }
    : { type: checked.type };
}
