import { Injectable } from "@nestjs/common";
import type { ConnectionSettings, ConnectionStatus } from "../connections/connection.js";
import { SecretBox } from "../crypto/secret-box.js";
import { PrismaService } from "../database/prisma.service.js";
import type { EventKind, JsonObject, Provider } from "../providers/provider-event.js";
import type { ClaimedJob } from "./jobs.repository.js";
import { PermanentError } from "./errors.js";

export interface JobReceipt {
  id: string;
  provider: Provider;
  accountId: string;
  eventId: string | null;
  leadId: string;
  kind: EventKind;
  occurredAt: Date;
  payload: JsonObject | null;
}

export interface JobConnection {
  id: string;
  tenantId: string;
  provider: Provider;
  externalAccountId: string;
  status: ConnectionStatus;
  settings: ConnectionSettings;
  /** Provider API token (decrypted), when the connection has one. */
  accessToken?: string;
  /** Standard Webhooks secret of the CRM destination (decrypted), when it has one. */
  crmSigningSecret?: string;
}

/** Everything a processor needs, loaded from Postgres by id (a BullMQ job carries ids only). */
export interface JobContext {
  job: ClaimedJob;
  receipt: JobReceipt;
  connection: JobConnection;
}

@Injectable()
export class JobContextLoader {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  /** One query: the job's receipt and connection, both scoped by the job's tenant. */
  async load(job: ClaimedJob): Promise<JobContext> {
    const { rows } = await this.prisma.pool.query<Row>(
      `SELECT r.id, r.provider, r.account_id, r.event_id, r.lead_id, r.kind, r.occurred_at, r.raw_payload,
              c.id AS connection_id, c.tenant_id, c.provider AS connection_provider, c.external_account_id, c.status,
              c.settings, c.credentials, c.crm_signing_secret
       FROM receipts r JOIN connections c ON c.id = $2::uuid AND c.tenant_id = $3::uuid
       WHERE r.id = $1::uuid AND r.tenant_id = $3::uuid`,
      [job.receiptId, job.connectionId, job.tenantId],
    );
    const row = rows[0];
    if (!row) throw new PermanentError("missing_receipt_or_connection");
    const open = <T>(envelope: string): T => {
      try {
        return this.box.open<T>(envelope);
      } catch {
        // Encrypted under a key this process does not have: fix the configuration, then replay.
        throw new PermanentError("secrets_unreadable");
      }
    };
    const credentials = row.credentials ? open<{ accessToken?: string }>(row.credentials) : {};
    return {
      job,
      receipt: {
        id: row.id,
        provider: row.provider,
        accountId: row.account_id,
        eventId: row.event_id,
        leadId: row.lead_id,
        kind: row.kind,
        occurredAt: row.occurred_at,
        payload: row.raw_payload,
      },
      connection: {
        id: row.connection_id,
        tenantId: row.tenant_id,
        provider: row.connection_provider,
        externalAccountId: row.external_account_id,
        status: row.status,
        settings: row.settings,
        ...(credentials.accessToken ? { accessToken: credentials.accessToken } : {}),
        ...(row.crm_signing_secret ? { crmSigningSecret: open<string>(row.crm_signing_secret) } : {}),
      },
    };
  }
}

interface Row {
  id: string;
  provider: Provider;
  account_id: string;
  event_id: string | null;
  lead_id: string;
  kind: EventKind;
  occurred_at: Date;
  raw_payload: JsonObject | null;
  connection_id: string;
  tenant_id: string;
  connection_provider: Provider;
  external_account_id: string;
  status: ConnectionStatus;
  settings: ConnectionSettings;
  credentials: string | null;
  crm_signing_secret: string | null;
}
