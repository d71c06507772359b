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

  async load(job: ClaimedJob): Promise<JobContext> {
    const [receipt, connection] = await Promise.all([
      this.prisma.receipt.findFirst({ where: { id: job.receiptId, tenantId: job.tenantId } }),
      this.prisma.connection.findFirst({ where: { id: job.connectionId, tenantId: job.tenantId } }),
    ]);
    if (!receipt || !connection) throw new PermanentError("missing_receipt_or_connection");
    const credentials = connection.credentials
      ? this.box.open<{ accessToken?: string }>(connection.credentials)
      : {};
    return {
      job,
      receipt: {
        id: receipt.id,
        provider: receipt.provider as Provider,
        accountId: receipt.accountId,
        eventId: receipt.eventId,
        leadId: receipt.leadId,
        kind: receipt.kind as EventKind,
        occurredAt: receipt.occurredAt,
        payload: receipt.rawPayload as JsonObject | null,
      },
      connection: {
        id: connection.id,
        tenantId: connection.tenantId,
        provider: connection.provider as Provider,
        externalAccountId: connection.externalAccountId,
        status: connection.status as ConnectionStatus,
        settings: connection.settings as ConnectionSettings,
        ...(credentials.accessToken ? { accessToken: credentials.accessToken } : {}),
        ...(connection.crmSigningSecret
          ? { crmSigningSecret: this.box.open<string>(connection.crmSigningSecret) }
          : {}),
      },
    };
  }
}
