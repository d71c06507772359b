import { Injectable, Logger } from "@nestjs/common";
import { PreauthBudget } from "../auth/preauth-budget.js";
import { AppError, unavailable } from "../common/app-error.js";
import type { IngestConnectionRow, IngestLookup } from "../connections/connections.repository.js";
import { ConnectionsRepository } from "../connections/connections.repository.js";
import { STATES } from "../connections/lifecycle/connection-states.js";
import { SecretBox } from "../crypto/secret-box.js";
import { type ConnectionSecretColumn, secretPlace } from "../crypto/stored-secrets.js";
import { Metrics } from "../observability/metrics.js";
import type { InboundCredentials } from "../providers/inbound-auth.js";
import type { ConnectionForIngest, InboundDelivery, ProviderAdapter } from "../providers/provider-adapter.js";
import type { Provider, ProviderEvent } from "../providers/provider-event.js";
import { AdapterRegistry } from "../providers/registry.js";
import { idempotencyKey, payloadDigest } from "./idempotency-key.js";
import { planJobs } from "./job-plan.js";
import { RateLimiter } from "./rate-limiter.js";
import { type ReceiptOutcome, ReceiptWriter, StaleConnection } from "./receipt-writer.js";

/** api.md's webhook answers. */
export type IngestAnswer =
  | { status: 202 | 200; body: { accepted: true; duplicate: boolean; receiptIds: string[] } }
  | { status: 200; body: { accepted: true; ignored: true; duplicate: boolean; receiptIds: string[] } };

/** How a delivery's answer is counted (leadgate_deliveries_total's `outcome`, the debug line). */
export function outcomeOf({ body }: IngestAnswer): "accepted" | "duplicate" | "ignored" {
  return "ignored" in body ? "ignored" : body.duplicate ? "duplicate" : "accepted";
}

/** Where a delivery says it belongs: a connection id in the URL, or a provider account in the body (Yelp). */
export type Route = { connectionId: string } | { accountOf: (delivery: InboundDelivery) => string };

/** A connection that accepts a delivery, and whether it came from the cache (its write is then checked). */
interface Admitted {
  row: IngestConnectionRow;
  connection: ConnectionForIngest;
  cached: boolean;
}

const unknownConnection = () =>
  new AppError(404, "unknown_connection", "No connection matches this webhook URL.");

/**
 * One delivery, start to answer: find the connection, authenticate the sender on the raw request,
 * normalize, write receipts and jobs, answer. Nothing is written before authentication and
 * normalization succeed; nothing is answered 2xx before the write committed.
 *
 * An unknown connection id or wrong credentials count against the client IP's
 * PREAUTH_FAILURE_LIMIT (a Yelp delivery is authenticated by its URL token, so its unknown business
 * does not count). While the IP is over it, an id no connection has is refused with 429 before any
 * query; any other delivery is looked up and verified as usual, so one that authenticates passes.
 */
@Injectable()
export class IngestionService {
  private readonly logger = new Logger("ingest");

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly adapters: AdapterRegistry,
    private readonly box: SecretBox,
    private readonly writer: ReceiptWriter,
    private readonly metrics: Metrics,
    private readonly rateLimiter: RateLimiter,
    private readonly budget: PreauthBudget,
  ) {}

  async ingest(
    provider: Provider,
    route: Route,
    delivery: InboundDelivery,
    requestId: string,
  ): Promise<IngestAnswer> {
    const context: Record<string, unknown> = { requestId, provider };
    try {
      const answer = await this.process(provider, route, delivery, context);
      // Per delivery at debug: at info, the receipt writer's batch lines say what was stored.
      if (Logger.isLevelEnabled("debug")) {
        this.logger.debug({ msg: "delivery", ...context, outcome: outcomeOf(answer), status: answer.status });
      }
      return answer;
    } catch (error) {
      const code = error instanceof AppError ? error.code : "internal_error";
      this.logger.warn({
        msg: "delivery rejected",
        ...context,
        outcome: code,
        status: error instanceof AppError ? error.status : 500,
      });
      throw error;
    }
  }

  private async process(
    provider: Provider,
    route: Route,
    delivery: InboundDelivery,
    context: Record<string, unknown>,
  ): Promise<IngestAnswer> {
    const adapter = this.adapters.get(provider);
    if (
      "connectionId" in route &&
      this.budget.exhausted(delivery.ip) &&
      !(await this.connections.mayExist(route.connectionId))
    ) {
      throw this.budget.refusal(delivery.ip);
    }
    // A cached connection only ever accepts: a refusal, or a write that finds the connection changed
    // since it was cached, is decided again on the connection as stored now (ConnectionsRepository).
    const storedNow = async () => (await this.find(provider, route, delivery, true)).row;
    const first = await this.find(provider, route, delivery, false);
    let admitted =
      (first.cached && first.row ? this.admitCached(adapter, delivery, first.row) : undefined) ??
      (await this.admit(adapter, delivery, route, context, first.cached ? await storedNow() : first.row));
    let events = adapter.normalize(delivery, admitted.connection);
    try {
      await this.rateLimiter.check(admitted.row.id);
    } catch (error) {
      // Over the limit on a cached connection: a refusal of the connection as stored now comes first.
      if (admitted.cached) await this.admit(adapter, delivery, route, context, await storedNow());
      throw error;
    }
    let outcomes: ReceiptOutcome[];
    try {
      outcomes = await this.write(admitted, events);
    } catch (error) {
      if (!(error instanceof StaleConnection)) throw error;
      const now = await this.admit(adapter, delivery, route, context, await storedNow());
      events = adapter.normalize(delivery, now.connection);
      if (now.row.id !== admitted.row.id) await this.rateLimiter.check(now.row.id); // a Yelp account moved
      admitted = now;
      outcomes = await this.write(admitted, events);
    }
    Object.assign(context, { tenantId: admitted.row.tenantId, connectionId: admitted.row.id });
    const receiptIds = outcomes.map((outcome) => outcome.receiptId);
    const duplicate = outcomes.every((outcome) => !outcome.inserted);
    const conflicts = outcomes.filter((outcome) => outcome.conflict).length;
    if (conflicts > 0) this.metrics.conflicts.inc(conflicts);
    // For the per-delivery debug line only: not built when nothing would print it.
    if (Logger.isLevelEnabled("debug")) {
      Object.assign(context, {
        events: events.map((event, index) => ({
          eventId: event.eventId,
          leadId: event.leadId,
          kind: event.kind,
          receiptId: receiptIds[index],
          stored: outcomes[index]?.inserted ? "new" : "duplicate",
        })),
        conflicts,
      });
    }
    if (events.every((event) => event.kind === "ignored")) {
      return { status: 200, body: { accepted: true, ignored: true, duplicate, receiptIds } };
    }
    return { status: duplicate ? 200 : 202, body: { accepted: true, duplicate, receiptIds } };
  }

  /** A cached connection that accepts this delivery, else undefined (the stored one decides). */
  private admitCached(
    adapter: ProviderAdapter,
    delivery: InboundDelivery,
    row: IngestConnectionRow,
  ): Admitted | undefined {
    try {
      return this.accepting(adapter, delivery, row, true);
    } catch {
      return undefined;
    }
  }

  /**
   * The connection as stored now (`row`: read now, undefined when there is none) if it accepts this
   * delivery; else the refusal (an unknown connection or wrong credentials count against the IP).
   */
  private async admit(
    adapter: ProviderAdapter,
    delivery: InboundDelivery,
    route: Route,
    context: Record<string, unknown>,
    row: IngestConnectionRow | undefined,
  ): Promise<Admitted> {
    if (!row) {
      throw "connectionId" in route
        ? await this.budget.failed(delivery.ip, unknownConnection())
        : unknownConnection();
    }
    Object.assign(context, { tenantId: row.tenantId, connectionId: row.id });
    try {
      return this.accepting(adapter, delivery, row, false);
    } catch (error) {
      throw error instanceof AppError && error.status === 401
        ? await this.budget.failed(delivery.ip, error)
        : error;
    }
  }

  /**
   * `row` if it accepts the delivery: the sender verified (`401` else), and its status one that
   * accepts deliveries (the lifecycle's `STATES[status].accepts`; a disabled connection does not: `410`).
   */
  private accepting(
    adapter: ProviderAdapter,
    delivery: InboundDelivery,
    row: IngestConnectionRow,
    cached: boolean,
  ): Admitted {
    const connection = this.connectionOf(row);
    adapter.verify(delivery, connection);
    if (!STATES[row.status].accepts) {
      throw new AppError(
        410,
        "connection_disabled",
        "This connection is disabled; deliveries are no longer accepted.",
      );
    }
    return { row, connection, cached };
  }

  /** Writes the delivery's events (checked against the connection's version when it was cached). */
  private async write({ row, cached }: Admitted, events: ProviderEvent[]): Promise<ReceiptOutcome[]> {
    // No event, nothing to carry the check: a cached connection's answer is decided on the stored one.
    if (cached && events.length === 0) throw new StaleConnection();
    return this.writer.write(
      events.map((event) => {
        const key = idempotencyKey(event);
        return {
          tenantId: row.tenantId,
          connectionId: row.id,
          event,
          idempotencyKey: key,
          payloadDigest: payloadDigest(event),
          jobs: planJobs(event, key, row, row.status === "paused"),
          connectionVersion: cached ? row.version : undefined,
        };
      }),
    );
  }

  /** The delivery's connection (undefined: none, or another provider's), and whether the cache answered. */
  private async find(
    provider: Provider,
    route: Route,
    delivery: InboundDelivery,
    fresh: boolean,
  ): Promise<{ row?: IngestConnectionRow; cached: boolean }> {
    let lookup: IngestLookup | undefined;
    try {
      lookup =
        "connectionId" in route
          ? await this.connections.findForIngest(route.connectionId, fresh)
          : await this.connections.findForIngestByAccount(provider, route.accountOf(delivery), fresh);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw unavailable("The connection store");
    }
    if (lookup) this.metrics.connectionReads.inc({ source: lookup.cached ? "cache" : "database" });
    return {
      row: lookup?.row.provider === provider ? lookup.row : undefined,
      cached: lookup?.cached ?? false,
    };
  }

  private connectionOf(row: IngestConnectionRow): ConnectionForIngest {
    return {
      id: row.id,
      externalAccountId: row.externalAccountId,
      credentials: this.acceptedCredentials(row),
    };
  }

  /** The current credentials, plus the previous ones while a rotation's grace period lasts. */
  private acceptedCredentials(row: IngestConnectionRow): InboundCredentials[] {
    const open = (envelope: string, which: ConnectionSecretColumn): InboundCredentials | undefined => {
      try {
        return this.box.open<InboundCredentials>(envelope, secretPlace(which, row.id));
      } catch (error) {
        // A wrong or missing LEADGATE_ENCRYPTION_KEY, or an envelope that is not this row's (copied
        // here, or unbound: see SecretBox): the operator's problem; the sender should retry later.
        this.logger.error({
          msg: `cannot decrypt ${which}`,
          connectionId: row.id,
          error: String(error),
        });
        return undefined;
      }
    };
    const current = row.inboundSecrets ? open(row.inboundSecrets, "inbound_secrets") : undefined;
    if (row.inboundSecrets && !current) throw unavailable("The connection's secrets");
    const graceful =
      row.previousSecrets && row.previousSecretsExpireAt && row.previousSecretsExpireAt > new Date();
    const previous = graceful ? open(row.previousSecrets!, "previous_secrets") : undefined;
    return [current, previous].filter((credentials) => credentials !== undefined);
  }
}
