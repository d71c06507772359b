import { Injectable } from "@nestjs/common";
import type { ConnectionSettings, ConnectionStatus } from "../connections/lifecycle/connection.js";
import { SecretBox } from "../crypto/secret-box.js";
import { type ConnectionSecretColumn, secretPlace } from "../crypto/stored-secrets.js";
import type { EventKind, JsonObject, Provider } from "../providers/provider-event.js";
import { type JobScope, OPERATION_SETTINGS } from "./operations.js";
import type { ClaimedJob } from "./state/job-state-machine.js";
import { PermanentError } from "../common/outbound/errors.js";
import { type EffectiveSettings, effectiveSettings, type ReplySettings } from "../replies/reply-settings.js";

/** How a receipt came in (receipts.source; the ingestion's ReceiptSource). */
export type ReceiptSource = "webhook" | "reconcile" | "backfill";

export interface JobReceipt {
  id: string;
  provider: Provider;
  accountId: string;
  eventId: string | null;
  leadId: string;
  kind: EventKind;
  occurredAt: Date;
  /** When Leadgate stored the receipt: a bound on how late a provider's own time may claim to be. */
  receivedAt: Date;
  /** How the receipt came in: a webhook, a reconciliation run, or a backfill. */
  source: ReceiptSource;
  payload: JsonObject | null;
}

export interface JobConnection {
  id: string;
  tenantId: string;
  provider: Provider;
  externalAccountId: string;
  displayName: string;
  status: ConnectionStatus;
  settings: ConnectionSettings;
  /** The reply settings in effect: the connection's own, else its tenant's defaults, else the built-in ones. */
  replies: EffectiveSettings;
  /** Provider API token (decrypted when first read), when the connection has one. */
  readonly accessToken?: string;
  /** Standard Webhooks secret of the CRM destination (decrypted when first read), when it has one. */
  readonly crmSigningSecret?: string;
  /** The signing secret a rotate-crm-secret replaced, while its grace period lasts (decrypted when first read). */
  readonly previousCrmSigningSecret?: string;
}

/**
 * Everything a processor of an event's side effect needs (scope `receipt`), loaded from Postgres by
 * id (a BullMQ job carries ids only).
 */
export interface JobContext {
  job: ClaimedJob;
  receipt: JobReceipt;
  connection: JobConnection;
}

/** A job that belongs to a connection (scope `connection`: provider sync, reconciliation). */
export interface ConnectionJobContext {
  job: ClaimedJob;
  connection: JobConnection;
}

/** A job that belongs to an alert (scope `alert`: notifications), with the alert's connection if any. */
export interface AlertJobContext {
  job: ClaimedJob;
  connection?: JobConnection;
}

/** The context of each job scope (OperationSettings.scope). */
export interface ScopeContexts {
  receipt: JobContext;
  connection: ConnectionJobContext;
  alert: AlertJobContext;
}
export type AnyJobContext = ScopeContexts[JobScope];

@Injectable()
export class JobContextLoader {
  constructor(private readonly box: SecretBox) {}

  /**
   * The job's context from the row its claim returned (CONTEXT_COLUMNS), as its operation's scope
   * says: a receipt job without its receipt or connection, or a connection job without its
   * connection, cannot run (`dead`, permanent).
   */
  from(job: ClaimedJob, row: ContextRow): AnyJobContext {
    switch (OPERATION_SETTINGS[job.operation].scope) {
      case "receipt": {
        if (row.receipt_found_id === null || row.connection_id === null)
          throw new PermanentError("missing_receipt_or_connection");
        return {
          job,
          receipt: receiptOf(row, row.receipt_found_id),
          connection: this.connection(row, row.connection_id),
        };
      }
      case "connection":
        if (row.connection_id === null) throw new PermanentError("missing_connection");
        return { job, connection: this.connection(row, row.connection_id) };
      case "alert":
        if (job.connectionId !== null && row.connection_id === null)
          throw new PermanentError("missing_connection");
        return row.connection_id === null
          ? { job }
          : { job, connection: this.connection(row, row.connection_id) };
    }
  }

  /** The connection of a claimed row, its secrets opened when first read. */
  private connection(row: ContextRow, connectionId: string): JobConnection {
    const open = <T>(envelope: string, column: ConnectionSecretColumn): T => {
      try {
        return this.box.open<T>(envelope, secretPlace(column, connectionId));
      } catch {
        // Encrypted under a key this process does not have, or not this row's envelope (copied
        // here, or unbound: see SecretBox): fix the configuration or the data, then replay.
        throw new PermanentError("secrets_unreadable");
      }
    };
    // Each secret is opened when a processor first reads it, so a job is not stopped by a secret it
    // does not use (a lead-upsert by an unreadable CRM signing secret), and none pays for the others.
    const lazily = <T>(
      envelope: string | null,
      column: ConnectionSecretColumn,
      read: (opened: T) => string | undefined,
    ) => {
      let value: { opened: string | undefined } | undefined;
      return () => (value ??= { opened: envelope ? read(open<T>(envelope, column)) : undefined }).opened;
    };
    const accessToken = lazily<{ accessToken?: string }>(
      row.credentials,
      "credentials",
      (c) => c.accessToken,
    );
    const crmSigningSecret = lazily<string>(row.crm_signing_secret, "crm_signing_secret", (secret) => secret);
    const previousCrmSigningSecret = lazily<string>(
      row.previous_crm_signing_secret,
      "previous_crm_signing_secret",
      (secret) => secret,
    );
    return {
      id: connectionId,
      tenantId: row.connection_tenant_id,
      provider: row.connection_provider,
      externalAccountId: row.external_account_id,
      displayName: row.display_name,
      status: row.status,
      settings: row.settings,
      replies: effectiveSettings(row.settings, { client: row.client_defaults, tenant: row.tenant_defaults }),
      get accessToken() {
        return accessToken();
      },
      get crmSigningSecret() {
        return crmSigningSecret();
      },
      get previousCrmSigningSecret() {
        return previousCrmSigningSecret();
      },
    };
  }
}

function receiptOf(row: ContextRow, id: string): JobReceipt {
  return {
    id,
    provider: row.provider,
    accountId: row.account_id,
    eventId: row.event_id,
    leadId: row.lead_id,
    kind: row.kind,
    occurredAt: row.occurred_at,
    receivedAt: row.received_at,
    source: row.source,
    payload: row.raw_payload,
  };
}

/** The receipt (`r`) and connection (`c`) columns a claim returns beside the job. */
export const CONTEXT_COLUMNS = `r.id AS receipt_found_id, r.provider, r.account_id, r.event_id, r.lead_id, r.kind, r.occurred_at,
  r.received_at, r.source,
  (SELECT p.payload FROM receipt_payloads p
   WHERE p.receipt_id = r.id AND p.tenant_id = r.tenant_id AND p.received_at = r.received_at) AS raw_payload, c.id AS connection_id, c.tenant_id AS connection_tenant_id, c.provider AS connection_provider,
  c.external_account_id, c.display_name, c.status, c.settings,
  (SELECT cl.defaults FROM clients cl WHERE cl.id = c.client_id) AS client_defaults,
  (SELECT t.defaults FROM tenants t WHERE t.id = c.tenant_id) AS tenant_defaults, c.credentials, c.crm_signing_secret,
  CASE WHEN c.previous_crm_signing_secret_expire_at > now() THEN c.previous_crm_signing_secret END
    AS previous_crm_signing_secret`;

/** The receipt and connection columns a claim returns beside the job (null when missing). */
export interface ContextRow {
  receipt_found_id: string | null;
  provider: Provider;
  account_id: string;
  event_id: string | null;
  lead_id: string;
  kind: EventKind;
  occurred_at: Date;
  received_at: Date;
  source: ReceiptSource;
  raw_payload: JsonObject | null;
  connection_id: string | null;
  connection_tenant_id: string;
  connection_provider: Provider;
  external_account_id: string;
  display_name: string;
  status: ConnectionStatus;
  settings: ConnectionSettings;
  /** The client's and the tenant's defaults, which the connection's reply settings inherit (src/replies/reply-settings.ts). */
  client_defaults: ReplySettings | null;
  tenant_defaults: ReplySettings | null;
  credentials: string | null;
  crm_signing_secret: string | null;
  /** Null once its grace period is over. */
  previous_crm_signing_secret: string | null;
}
