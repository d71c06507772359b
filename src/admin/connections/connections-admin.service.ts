// The admin side of connections: create, read, update, pause, resume, rotate (inbound and CRM
// signing secrets), end a rotation's grace period, disable (sync: connection-sync.ts). Every change commits with its audit
// row; secrets leave only in the answer to create and rotate.
import {
  ConnectionAnswer,
  CreatedConnection,
  ResumedConnection,
  RotatedSecrets,
  UpdatedConnection,
} from "./connection-answers.js";
import { randomBytes } from "node:crypto";
import { Injectable } from "@nestjs/common";
import type { Principal, TenantScope } from "../../auth/principal.js";
import { tenantWhere } from "../../auth/principal.js";
import { TenantsRepository } from "../../tenants/tenants.repository.js";
import { AppError } from "../../common/app-error.js";
import { given } from "../../common/validation.js";
import { DestinationGuard } from "../../common/outbound/destination-guard.js";
import { type ConnectionSettings, settingsWithoutNulls } from "../../connections/lifecycle/connection.js";
import { ConnectionStore } from "../../connections/connection-store.js";
import { secretPlace } from "../../crypto/stored-secrets.js";
import { AccountAccessCheck } from "../../connections/account-access.js";
import {
  ConnectionsService,
  credentialColumns,
  generateCredentials,
  shown,
  type ShownSecrets,
} from "../../connections/connections.service.js";
import { SecretBox } from "../../crypto/secret-box.js";
import { PrismaService } from "../../database/prisma.service.js";
import { Transactions, type Tx } from "../../database/transactions.js";
import type { Connection, Prisma } from "../../generated/prisma/client.js";
import { JobQueue } from "../../jobs/job-queue.js";
import type { EnqueueableJob } from "../../jobs/job-queue.js";
import { ProviderSyncJobs } from "../../connections/provider-sync.js";
import type { InboundCredentials } from "../../providers/inbound-auth.js";
import type { Provider } from "../../providers/provider-event.js";
import { AuditRepository } from "../../audit/audit.repository.js";
import { notFound } from "../../common/id.pipe.js";
import { pageAfter, toPage, type Page } from "../../common/pagination.js";
import { ClientsRepository } from "../../clients/clients.repository.js";
import {
  effectiveSettings,
  type InheritedSettings,
  type ReplySettings,
} from "../../replies/reply-settings.js";
import {
  connectionSettingsErrors,
  delayErrors,
  refuse,
  storedSizeErrors,
} from "../../replies/reply-settings-check.js";
import { connectionView, type ConnectionView } from "./connection-view.js";
import type {
  ConnectionsQuery,
  CreateConnectionBody,
  RotateCrmSecretBody,
  RotateSecretBody,
  UpdateConnectionBody,
} from "../../connections/connections.dto.js";

const DEFAULT_GRACE_SECONDS = 86_400;

/** A connection read with its client's and tenant's defaults, for its view's effectiveSettings. */
const WITH_DEFAULTS = {
  tenant: { select: { defaults: true } },
  client: { select: { defaults: true } },
} satisfies Prisma.ConnectionInclude;
export const inheritedOf = (row: ConnectionWithDefaults): InheritedSettings => ({
  client: row.client.defaults as ReplySettings,
  tenant: row.tenant.defaults as ReplySettings,
});
export type ConnectionWithDefaults = Prisma.ConnectionGetPayload<{ include: typeof WITH_DEFAULTS }>;

const crmSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

@Injectable()
export class ConnectionsAdminService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly connections: ConnectionsService,
    private readonly audit: AuditRepository,
    private readonly box: SecretBox,
    private readonly queue: JobQueue,
    private readonly tenants: TenantsRepository,
    private readonly destinations: DestinationGuard,
    private readonly access: AccountAccessCheck,
    private readonly syncs: ProviderSyncJobs,
    private readonly store: ConnectionStore,
    private readonly clients: ClientsRepository,
  ) {}

  async create(by: Principal, body: CreateConnectionBody): Promise<CreatedConnection> {
    const tenantId = await this.tenants.tenantOfNew(by, body.tenantId, "creates a connection");
    await this.destinations.checkSetting("settings.crmDestination.url", body.settings?.crmDestination?.url);
    if (body.credentials) await this.proveAccess(by, body.provider, body.externalAccountId, body.credentials);
    const { tenantId: _given, ...input } = body;
    const named = given(input.settings ?? {});
    refuse(connectionSettingsErrors(body.provider, named));
    const settings = settingsWithoutNulls(named);
    refuse(storedSizeErrors(settings, "settings"));
    return this.transactions.run(async (tx) => {
      // First: the creation locks the tenant's row for its cap (FOR NO KEY UPDATE), which a FOR
      // SHARE taken before it would deadlock with. A refused delay rolls the creation back.
      const created = await this.connections.create(tenantId, { ...input, settings }, tx);
      const defaults = await this.clients.inherited(tx, created.connection.clientId, "share");
      refuse(delayErrors(effectiveSettings(settings, defaults), named, "settings"));
      await this.audit.record(tx, by, {
        action: "connection.create",
        tenantId,
        targetType: "connection",
        targetId: created.connection.id,
        details: {
          provider: body.provider,
          externalAccountId: body.externalAccountId,
          clientId: created.connection.clientId,
        },
      });
      const connection = this.view(created.connection, defaults);
      return {
        connection,
        webhookUrl: created.webhookUrl,
        secrets: created.secrets,
        warnings: connection.warnings,
      };
    });
  }

  async list(scope: TenantScope, query: ConnectionsQuery): Promise<Page<ConnectionView>> {
    const page = pageAfter("createdAt", query);
    const rows = await this.prisma.connection.findMany({
      where: {
        AND: [tenantWhere(scope), page.where],
        provider: query.provider,
        tenantId: query.tenantId,
        clientId: query.clientId,
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      include: WITH_DEFAULTS,
    });
    const items = toPage(rows, query, (row) => row.createdAt);
    return {
      items: items.items.map((row) => this.view(row, inheritedOf(row))),
      nextCursor: items.nextCursor,
    };
  }

  async get(scope: TenantScope, id: string): Promise<ConnectionView> {
    const row = await this.find(this.prisma, scope, id);
    return this.view(row, inheritedOf(row));
  }

  /** Display name, provider credentials, settings; adding a CRM destination creates its signing secret (shown once). */
  async update(
    by: Principal,
    scope: TenantScope,
    id: string,
    body: UpdateConnectionBody,
  ): Promise<UpdatedConnection> {
    await this.destinations.checkSetting("settings.crmDestination.url", body.settings?.crmDestination?.url);
    if (body.credentials) {
      // Before the transaction: the provider call may take seconds. The account cannot change.
      const current = await this.find(this.prisma, scope, id);
      await this.proveAccess(by, current.provider as Provider, current.externalAccountId, body.credentials);
    }
    return this.transactions.run(async (tx) => {
      const row = await this.store.lock(tx, scope, id);
      const named = given(body.settings ?? {});
      refuse(connectionSettingsErrors(row.provider as Provider, named));
      const settings = settingsWithoutNulls({ ...(row.settings as ConnectionSettings), ...named });
      refuse(storedSizeErrors(settings, "settings"));
      // Moved to another client of its tenant (another tenant's, or a deleted one: 404): it inherits
      // that client's defaults from now on.
      const clientId =
        body.clientId === undefined
          ? row.clientId
          : await this.clients.clientFor(tx, row.tenantId, body.clientId);
      const defaults = await this.clients.inherited(tx, clientId, "share");
      if ("autoResponse" in named || "responseTarget" in named || clientId !== row.clientId) {
        refuse(delayErrors(effectiveSettings(settings, defaults), named, "settings"));
      }
      const secrets: ShownSecrets = {};
      let crmSigningSecret = row.crmSigningSecret;
      if (settings.crmDestination && !crmSigningSecret) {
        secrets.crmSigningSecret = crmSecret();
        crmSigningSecret = this.box.seal(secrets.crmSigningSecret, secretPlace("crm_signing_secret", row.id));
      }
      const { connection: updated } = await this.store.apply(
        tx,
        row,
        body.credentials ? "replaceCredentials" : "update",
        {
          displayName: body.displayName,
          clientId,
          ...(body.credentials ? credentialColumns(this.box, row.id, body.credentials) : {}),
          settings: settings as Prisma.InputJsonObject,
          crmSigningSecret,
        },
      );
      await this.audit.record(tx, by, {
        action: "connection.update",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        // Names of what changed only: credentials are never written anywhere in clear.
        details: {
          fields: Object.keys(given(body)).concat(
            Object.keys(given(body.settings ?? {})).map((k) => `settings.${k}`),
          ),
        },
      });
      return { connection: this.view(updated, defaults), secrets };
    });
  }

  /** Stops side effects: receipts are still stored, their jobs wait as `held`. */
  async pause(by: Principal, scope: TenantScope, id: string): Promise<ConnectionAnswer> {
    return this.transactions.run(async (tx) => {
      const row = await this.store.lock(tx, scope, id);
      const { connection: updated } = await this.store.apply(tx, row, "pause");
      await this.audit.record(tx, by, {
        action: "connection.pause",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        details: { from: row.status },
      });
      return { connection: this.view(updated, await this.clients.inherited(tx, row.clientId)) };
    });
  }

  /** Back to active (also after a credential error); `held` and `blocked` jobs are queued again. */
  async resume(by: Principal, scope: TenantScope, id: string): Promise<ResumedConnection> {
    const { result, jobs } = await this.transactions.run(async (tx) => {
      const row = await this.store.lock(tx, scope, id);
      const { connection: updated, requeued } = await this.store.apply(tx, row, "resume");
      await this.audit.record(tx, by, {
        action: "connection.resume",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        details: { from: row.status, requeuedJobs: requeued.length },
      });
      const connection = this.view(updated, await this.clients.inherited(tx, row.clientId));
      return { result: { connection, requeuedJobs: requeued.length }, jobs: requeued };
    });
    await this.queue.enqueue(jobs); // after commit; the dispatcher covers a failure here
    return result;
  }

  /**
   * New inbound secrets; the old ones stay accepted for the grace period. Only the last rotation's
   * secrets are kept: rotating again ends the previous grace period.
   */
  async rotateSecret(
    by: Principal,
    scope: TenantScope,
    id: string,
    body: RotateSecretBody,
  ): Promise<RotatedSecrets> {
    const { result, jobs } = await this.transactions.run(async (tx) => {
      const row = await this.store.lock(tx, scope, id);
      this.store.check(row, "rotateSecret"); // before the checks of what can be rotated
      const current = row.inboundSecrets
        ? this.box.open<InboundCredentials>(row.inboundSecrets, secretPlace("inbound_secrets", row.id))
        : undefined;
      if (!current || current.type === "none") {
        throw new AppError(
          409,
          "nothing_to_rotate",
          "This connection has no inbound secret (Yelp uses the platform URL token).",
        );
      }
      if (current.type === "apiKey" && body.apiKey === undefined) {
        throw new AppError(400, "validation_failed", "Invalid input: apiKey.", {
          apiKey: ["required: Leadgate cannot generate a Static Forms API key"],
        });
      }
      const next = generateCredentials({
        type: current.type,
        headerName: current.type === "header" ? current.headerName : undefined,
        apiKey: body.apiKey,
      });
      const graceSeconds = body.graceSeconds ?? DEFAULT_GRACE_SECONDS;
      await this.store.apply(tx, row, "rotateSecret", {
        inboundSecrets: this.box.seal(next, secretPlace("inbound_secrets", row.id)),
        previousSecrets:
          graceSeconds > 0 ? this.box.seal(current, secretPlace("previous_secrets", row.id)) : null,
        previousSecretsExpireAt: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : null,
      });
      // The provider's copy of the credentials follows now, well inside the grace period.
      const jobs = registered(row) ? await this.syncs.start(tx, target(row), "rotate") : [];
      await this.audit.record(tx, by, {
        action: "connection.rotate-secret",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        details: { graceSeconds },
      });
      return {
        result: {
          secrets: shown(next),
          webhookUrl: this.connections.webhookUrl(row.provider as Provider, row.id, next),
        },
        jobs,
      };
    });
    await this.queue.enqueue(jobs); // after commit; the dispatcher covers a failure here
    return result;
  }

  /**
   * A new CRM signing secret; until the grace period ends each CRM delivery is signed with the old
   * one too (two signatures in `webhook-signature`). Only the last rotation's old secret is kept.
   */
  async rotateCrmSecret(by: Principal, scope: TenantScope, id: string, body: RotateCrmSecretBody) {
    return this.transactions.run(async (tx) => {
      const row = await this.store.lock(tx, scope, id);
      this.store.check(row, "rotateCrmSecret");
      if (!row.crmSigningSecret || !(row.settings as ConnectionSettings).crmDestination) {
        throw new AppError(
          409,
          "no_crm_destination",
          "This connection has no CRM destination (PATCH settings.crmDestination adds one, with its secret).",
        );
      }
      const next = crmSecret();
      const graceSeconds = body.graceSeconds ?? DEFAULT_GRACE_SECONDS;
      const previous = this.box.open<string>(row.crmSigningSecret, secretPlace("crm_signing_secret", row.id));
      await this.store.apply(tx, row, "rotateCrmSecret", {
        crmSigningSecret: this.box.seal(next, secretPlace("crm_signing_secret", row.id)),
        previousCrmSecret:
          graceSeconds > 0
            ? this.box.seal(previous, secretPlace("previous_crm_signing_secret", row.id))
            : null,
        previousCrmExpireAt: graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000) : null,
      });
      await this.audit.record(tx, by, {
        action: "connection.rotate-crm-secret",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        details: { graceSeconds },
      });
      return { secrets: { crmSigningSecret: next } };
    });
  }

  /**
   * Ends every running grace period now: the inbound secrets replaced by rotate-secret stop being
   * accepted, and CRM deliveries stop carrying the signature of the secret rotate-crm-secret replaced.
   */
  async revokePreviousSecret(by: Principal, scope: TenantScope, id: string): Promise<ConnectionAnswer> {
    return this.transactions.run(async (tx) => {
      const row = await this.store.lock(tx, scope, id);
      const now = new Date();
      const { connection: updated } = await this.store.apply(tx, row, "revokePreviousSecret", {
        previousSecrets: null,
        previousSecretsExpireAt: null,
        previousCrmSecret: null,
        previousCrmExpireAt: null,
      });
      await this.audit.record(tx, by, {
        action: "connection.revoke-previous-secret",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        // Which grace periods were still running (and so ended here).
        details: {
          inbound: row.previousSecrets !== null && (row.previousSecretsExpireAt ?? now) > now,
          crm: row.previousCrmSecret !== null && (row.previousCrmExpireAt ?? now) > now,
        },
      });
      return { connection: this.view(updated, await this.clients.inherited(tx, row.clientId)) };
    });
  }

  /** Disables the connection for good: deliveries answer 410, unfinished jobs are cancelled, history stays. */
  async disable(by: Principal, scope: TenantScope, id: string): Promise<void> {
    const jobs = await this.transactions.run(async (tx): Promise<EnqueueableJob[]> => {
      const row = await this.store.lock(tx, scope, id);
      if (row.status === "disabled") return []; // DELETE is idempotent: disabled already
      // The worker's clean-up revokes the grant and deletes the tokens (ConnectionCleanup).
      const { cancelled } = await this.store.apply(tx, row, "disable", {
        disabledAt: new Date(),
        cleanupDueAt: row.credentials === null ? null : new Date(),
      });
      // After the disable's cancel (which ends a sync on its way): the provider-side removal, which runs
      // although the connection is disabled and before the clean-up deletes the tokens.
      const removal =
        registered(row) && row.credentials !== null ? await this.syncs.start(tx, target(row), "remove") : [];
      await this.audit.record(tx, by, {
        action: "connection.disable",
        tenantId: row.tenantId,
        targetType: "connection",
        targetId: row.id,
        details: { cancelledJobs: cancelled },
      });
      return removal;
    });
    await this.queue.enqueue(jobs); // after commit; the dispatcher covers a failure here
  }

  /**
   * A tenant-admin's pasted credentials must reach the account with one provider read call (422
   * account_not_accessible); an operator may paste without proof (migration, staging: api.md).
   */
  private async proveAccess(
    by: Principal,
    provider: Provider,
    externalAccountId: string,
    credentials: { accessToken: string },
  ): Promise<void> {
    if (by.role === "operator") return;
    await this.access.require(provider, externalAccountId, credentials.accessToken);
  }

  private view(row: Connection, inherited: InheritedSettings): ConnectionView {
    return connectionView(
      row,
      this.connections.webhookUrl(row.provider as Provider, row.id, { type: "none" }),
      inherited,
    );
  }

  /** The scope's connection with its tenant's defaults (unlocked: a change locks it through the store). */
  async find(db: Tx | PrismaService, scope: TenantScope, id: string): Promise<ConnectionWithDefaults> {
    const row = await db.connection.findFirst({
      where: { ...tenantWhere(scope), id },
      include: WITH_DEFAULTS,
    });
    if (!row) throw notFound("connection");
    return row;
  }
}

/** Whether Leadgate looks after the connection's provider-side webhook (not `manual`). */
function registered(row: Connection): boolean {
  return row.registrationStatus !== "manual";
}

function target(row: Connection) {
  return { tenantId: row.tenantId, connectionId: row.id };
}
