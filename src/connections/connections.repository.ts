import { Injectable } from "@nestjs/common";
import { NaturalBatcher } from "../common/natural-batcher.js";
import { KnownIds } from "../database/known-ids.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Provider } from "../providers/provider-event.js";
import type { ReplySettings } from "../replies/reply-settings.js";
import type { ConnectionSettings, ConnectionStatus } from "./lifecycle/connection.js";

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
  /** The tenant's `defaults`: the reply settings the connection inherits (the job plan's autoResponse). */
  tenantDefaults: ReplySettings;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How long an id found to be unknown answers "unknown" without a query, and how many are kept. */
const UNKNOWN_TTL_MS = 30_000;
const MAX_UNKNOWN = 10_000;

/**
 * Connection reads on the ingest hot path. A delivery names its connection by id (Static Forms,
 * Thumbtack) or by provider account (Yelp), and no tenant is known yet: the connection is what
 * tells the tenant. Concurrent lookups share one query (natural batching), so every delivery sees
 * the connection as stored now (a pause, rotation or disable applies to the next delivery) at a
 * fraction of a query each.
 *
 * The tenant's defaults come in the same statement (a lookup by the tenant's primary key): no round
 * trip more per delivery, and always as stored now, so there is no cache to invalidate when a
 * tenant's defaults change (the next delivery plans with the new ones). A scalar subquery costs
 * less than a join here (docs/benchmarks.md, "Tenant defaults at ingest").
 */
const COLUMNS = `c.id, c.tenant_id AS "tenantId", c.provider, c.external_account_id AS "externalAccountId", c.status,
  c.inbound_secrets AS "inboundSecrets", c.previous_secrets AS "previousSecrets",
  c.previous_secrets_expire_at AS "previousSecretsExpireAt", c.settings,
  (SELECT t.defaults FROM tenants t WHERE t.id = c.tenant_id) AS "tenantDefaults"`;
const FROM = "connections c";

@Injectable()
export class ConnectionsRepository {
  private readonly byId = new NaturalBatcher<string, IngestConnectionRow | undefined>(
    async (ids) => {
      // Named, as the receipt statement (src/ingestion/receipt-writer.ts): parsed once per connection.
      const { rows } = await this.prisma.pool.query<IngestConnectionRow>({
        name: "ingest-connections-by-id",
        text: `SELECT ${COLUMNS} FROM ${FROM} WHERE c.id = ANY($1::uuid[])`,
        values: [[...new Set(ids)]],
      });
      const found = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => found.get(id));
    },
    { maxBatch: 500 },
  );

  private readonly byAccount = new NaturalBatcher<
    { provider: Provider; accountId: string },
    IngestConnectionRow | undefined
  >(
    async (keys) => {
      const { rows } = await this.prisma.pool.query<IngestConnectionRow>(
        `SELECT ${COLUMNS} FROM ${FROM}
         WHERE (c.provider, c.external_account_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
         -- An account may have disabled connections besides its one live connection (a disabled
         -- connection releases its account): the live one comes first and is the one routed to.
         ORDER BY c.status = 'disabled', c.created_at DESC`,
        [keys.map((key) => key.provider), keys.map((key) => key.accountId)],
      );
      return keys.map((key) =>
        rows.find((row) => row.provider === key.provider && row.externalAccountId === key.accountId),
      );
    },
    { maxBatch: 200 },
  );

  /**
   * Ids looked up and not found, until when they answer "unknown" without a query (a flood of one
   * made-up id costs one query per 30 s). Ids are random UUIDs the database draws when it creates
   * a connection, so none can be cached here before its connection exists.
   */
  private readonly unknown = new Map<string, number>();
  /** Every connection id, for callers that must not query for ids that do not exist (KnownIds). */
  private readonly ids: KnownIds;

  constructor(private readonly prisma: PrismaService) {
    this.ids = new KnownIds(prisma.pool, "SELECT id::text AS id FROM connections WHERE created_at >= $1");
  }

  async findForIngest(id: string): Promise<IngestConnectionRow | undefined> {
    if (!UUID.test(id)) return undefined;
    const key = id.toLowerCase();
    const until = this.unknown.get(key);
    if (until !== undefined && until > Date.now()) return undefined;
    const row = await this.byId.submit(key);
    if (row) {
      this.unknown.delete(key);
      this.ids.add(key);
    } else {
      if (this.unknown.size >= MAX_UNKNOWN) this.unknown.delete(this.unknown.keys().next().value!);
      this.unknown.delete(key); // re-inserted last: the Map's order is the order of expiry
      this.unknown.set(key, Date.now() + UNKNOWN_TTL_MS);
    }
    return row;
  }

  /** False when no connection has this id (see KnownIds: no query per call). */
  async mayExist(id: string): Promise<boolean> {
    return UUID.test(id) && this.ids.mayExist(id.toLowerCase());
  }

  findForIngestByAccount(provider: Provider, accountId: string): Promise<IngestConnectionRow | undefined> {
    return this.byAccount.submit({ provider, accountId });
  }
}
