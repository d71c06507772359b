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
  /** Its client's and its tenant's `defaults`: the reply settings the connection inherits (the job plan's autoResponse). */
  clientDefaults: ReplySettings | null;
  tenantDefaults: ReplySettings;
  /**
   * The row versions the columns above were read at (the connection's, its tenant's and its
   * client's `xmin`): any change to any of them changes it. The receipt statement compares it to the rows as stored
   * when it writes (ReceiptInput.connectionVersion).
   */
  version: string;
}

/** A connection as ingest found it: from the process's cache (as it was when looked up), or read now. */
export interface IngestLookup {
  row: IngestConnectionRow;
  cached: boolean;
}

/**
 * The version of a connection `alias` as ingest reads it, an SQL expression: its row's and its
 * tenant's `xmin`. Every update of a row writes a new row version with a new xmin, even one that
 * sets the same values; locks and freezing keep it.
 */
export const INGEST_VERSION = (alias: string) =>
  `(${alias}.xmin::text || ':' || COALESCE((SELECT t.xmin::text FROM tenants t WHERE t.id = ${alias}.tenant_id), '-')
    || ':' || COALESCE((SELECT cl.xmin::text FROM clients cl WHERE cl.id = ${alias}.client_id), '-'))`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How long an id found to be unknown answers "unknown" without a query, and how many are kept. */
const UNKNOWN_TTL_MS = 30_000;
const MAX_UNKNOWN = 10_000;

/** How long a connection found serves later deliveries from the cache, and how many are kept. */
const CACHE_TTL_MS = 60_000;
const MAX_CACHED = 10_000;

/**
 * Connection reads on the ingest hot path. A delivery names its connection by id (Static Forms,
 * Thumbtack) or by provider account (Yelp), and no tenant is known yet: the connection is what
 * tells the tenant. Concurrent lookups share one query (natural batching), so every delivery sees
 * the connection as stored now (a pause, rotation or disable applies to the next delivery) at a
 * fraction of a query each.
 *
 * The client's and the tenant's defaults come in the same statement (lookups by primary key). A scalar
 * subquery costs less than a join here (docs/benchmarks.md, "Tenant defaults at ingest").
 *
 * A connection found is kept (CACHE_TTL_MS, MAX_CACHED) and later deliveries may use it without a
 * query: on the ingest path the lookup was a third of the API's database work. A cached row is never
 * trusted on its own: its `version` goes with the receipt statement, which writes nothing for it if
 * the connection, its client or its tenant changed since (a pause, a rotation, a disable, new defaults, through
 * any process), and a cached row that refuses a delivery (wrong credentials, disabled) is not the
 * last word either; both cases are decided again on the row as stored now (IngestionService). So a
 * change applies to the next delivery as before, and there is nothing to invalidate.
 */
const COLUMNS = `c.id, c.tenant_id AS "tenantId", c.provider, c.external_account_id AS "externalAccountId", c.status,
  c.inbound_secrets AS "inboundSecrets", c.previous_secrets AS "previousSecrets",
  c.previous_secrets_expire_at AS "previousSecretsExpireAt", c.settings,
  (SELECT cl.defaults FROM clients cl WHERE cl.id = c.client_id) AS "clientDefaults",
  (SELECT t.defaults FROM tenants t WHERE t.id = c.tenant_id) AS "tenantDefaults",
  ${INGEST_VERSION("c")} AS version`;
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

  /** Connections found, by `id:<id>` or `account:<provider>:<account>`, with when each stops serving. */
  private readonly cache = new Map<string, { row: IngestConnectionRow; until: number }>();

  /** The connection with this id: from the cache unless `fresh`, else read now (and cached). */
  async findForIngest(id: string, fresh: boolean): Promise<IngestLookup | undefined> {
    if (!UUID.test(id)) return undefined;
    const key = id.toLowerCase();
    return this.cachedOr(`id:${key}`, fresh, () => this.readById(key));
  }

  /** False when no connection has this id (see KnownIds: no query per call). */
  async mayExist(id: string): Promise<boolean> {
    return UUID.test(id) && this.ids.mayExist(id.toLowerCase());
  }

  /** The live connection of a provider account: from the cache unless `fresh`, else read now (and cached). */
  findForIngestByAccount(
    provider: Provider,
    accountId: string,
    fresh: boolean,
  ): Promise<IngestLookup | undefined> {
    return this.cachedOr(`account:${provider}:${accountId}`, fresh, () =>
      this.byAccount.submit({ provider, accountId }),
    );
  }

  private async cachedOr(
    key: string,
    fresh: boolean,
    read: () => Promise<IngestConnectionRow | undefined>,
  ): Promise<IngestLookup | undefined> {
    const hit = this.cache.get(key);
    if (!fresh && hit && hit.until > Date.now()) return { row: hit.row, cached: true };
    const row = await read();
    this.cache.delete(key); // re-inserted last: the Map's order is the order of expiry
    if (row) {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, { row, until: Date.now() + CACHE_TTL_MS });
    }
    return row && { row, cached: false };
  }

  private async readById(key: string): Promise<IngestConnectionRow | undefined> {
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
}
