import { Injectable } from "@nestjs/common";
import { NaturalBatcher } from "../common/natural-batcher.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Provider } from "../providers/provider-event.js";
import type { ConnectionSettings, ConnectionStatus } from "./connection.js";

/** The columns ingest needs to route, authenticate and plan a delivery. */
export interface IngestConnectionRow {
  id: string;
  tenantId: string;
  provider: Provider;
  externalAccountId: string;
  status: ConnectionStatus;
  inboundSecrets: string | null;
  previousSecrets: string | null;
  previousSecretsExpireAt: Date | null;
  settings: ConnectionSettings;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Connection reads on the ingest hot path. A delivery names its connection by id (Static Forms,
 * Thumbtack) or by provider account (Yelp), and no tenant is known yet: the connection is what
 * tells the tenant. Concurrent lookups share one query (natural batching), so every delivery sees
 * the connection as stored now (a pause, rotation or disable applies to the next delivery) at a
 * fraction of a query each.
 */
@Injectable()
export class ConnectionsRepository {
  private readonly byId = new NaturalBatcher<string, IngestConnectionRow | undefined>(
    async (ids) => {
      const rows = await this.prisma.connection.findMany({
        where: { id: { in: [...new Set(ids)] } },
        select: SELECT,
      });
      const found = new Map(rows.map((row) => [row.id, row as IngestConnectionRow]));
      return ids.map((id) => found.get(id));
    },
    { maxBatch: 500 },
  );

  private readonly byAccount = new NaturalBatcher<
    { provider: Provider; accountId: string },
    IngestConnectionRow | undefined
  >(
    async (keys) => {
      const rows = await this.prisma.connection.findMany({
        where: { OR: keys.map((key) => ({ provider: key.provider, externalAccountId: key.accountId })) },
        select: SELECT,
      });
      return keys.map(
        (key) =>
          rows.find((row) => row.provider === key.provider && row.externalAccountId === key.accountId) as
            IngestConnectionRow | undefined,
      );
    },
    { maxBatch: 200 },
  );

  constructor(private readonly prisma: PrismaService) {}

  findForIngest(id: string): Promise<IngestConnectionRow | undefined> {
    return UUID.test(id) ? this.byId.submit(id.toLowerCase()) : Promise.resolve(undefined);
  }

  findForIngestByAccount(provider: Provider, accountId: string): Promise<IngestConnectionRow | undefined> {
    return this.byAccount.submit({ provider, accountId });
  }
}

const SELECT = {
  id: true,
  tenantId: true,
  provider: true,
  externalAccountId: true,
  status: true,
  inboundSecrets: true,
  previousSecrets: true,
  previousSecretsExpireAt: true,
  settings: true,
} as const;
