import { Injectable } from "@nestjs/common";
import { SqlBatch } from "../common/sql-batch.js";
import { RetryableError } from "../common/outbound/errors.js";
import { PrismaService } from "../database/prisma.service.js";
import type { JsonObject, Provider } from "../providers/provider-event.js";
import { SINCE } from "./first-responses.js";
import type {
  Contact,
  HistoryRun,
  LeadHistory,
  LeadMessage,
  PhoneConsent,
  StoredHistory,
} from "../providers/provider-inbox.js";

/** A lead's contact fields and details, and the service asked for (the first reply's merge fields). */
export interface LeadProfile {
  contact: Contact;
  details: JsonObject;
  service?: string;
}

/** What the first reply's template renders of the lead (api.md "First replies", merge fields). */
export interface LeadReplyFields {
  id: string;
  name: string | null;
  firstName: string | null;
  service: string | null;
}

/** When a receipt of the lead came in, and the provider's time of the lead's first event it gives. */
export interface LeadArrival {
  /** When Leadgate stored this receipt. */
  receivedAt: Date;
  providerCreatedAt: Date;
  /** In the scope of `lead.unanswered` (a fresh Yelp or Thumbtack lead); written with a new lead only. */
  awaitsResponse: boolean;
}

/**
 * A lead as an upsert left it. `responseStale`: its recorded first response counts from a later
 * time than the lead's creation as now known (an earlier arrival came to light after the response
 * was recorded, as when the business's message comes before its lead); FirstResponses.recount mends it.
 */
export interface UpsertedLead {
  id: string;
  responseStale: boolean;
}

export interface LeadKey {
  tenantId: string;
  connectionId: string;
  provider: Provider;
  externalLeadId: string;
}

/** The lead store (our CRM-side record), keyed by (tenantId, provider, externalLeadId). */
@Injectable()
export class LeadsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly sql: SqlBatch,
  ) {}

  /**
   * Upserts the lead's contact data as of `eventAt`, from the event of receipt `receiptId`, and adds
   * its `messages` (once each, by the provider's message id), in one statement. An older event never
   * overwrites newer data; a placeholder (a message that came before its lead) is always filled.
   * The receipt that makes the lead complete for the first time (inserts it, or fills the
   * placeholder) is kept as `created_by_receipt_id`, once: its CRM delivery is `lead.created`.
   * The `arrival` times keep the earliest seen, whatever the event's age; `awaitsResponse` is
   * written only with a new lead.
   */
  async upsertContact(
    key: LeadKey,
    receiptId: string,
    { contact, details, service }: LeadProfile,
    eventAt: Date,
    messages: LeadMessage[] = [],
    arrival: LeadArrival = { receivedAt: eventAt, providerCreatedAt: eventAt, awaitsResponse: false },
  ): Promise<UpsertedLead> {
    const { rows } = await this.sql.query<UpsertedLead>(
      `WITH upserted AS (
         INSERT INTO leads AS l (tenant_id, connection_id, provider, external_lead_id, status, name, email, phone, details,
                                 last_event_at, created_by_receipt_id, first_name, service,
                                 received_at, provider_created_at, awaits_response)
         VALUES ($1::uuid, $2::uuid, $3, $4, 'open', $5, $6, $7, $8::jsonb, $9, $10::uuid, $12, $13, $14, $15, $16)
         ON CONFLICT (tenant_id, provider, external_lead_id) DO UPDATE SET
           ${ifFresh("status", "'open'")},
           created_by_receipt_id = CASE WHEN l.status = 'placeholder' THEN COALESCE(l.created_by_receipt_id, EXCLUDED.created_by_receipt_id)
                                        ELSE l.created_by_receipt_id END,
           ${ifFresh("name", "COALESCE(EXCLUDED.name, l.name)")},
           ${ifFresh("first_name", "COALESCE(EXCLUDED.first_name, l.first_name)")},
           ${ifFresh("service", "COALESCE(EXCLUDED.service, l.service)")},
           ${ifFresh("email", "COALESCE(EXCLUDED.email, l.email)")},
           -- an opted-out phone stays cleared until a newer opt-in
           ${ifFresh("phone", "CASE WHEN l.phone_consent IS FALSE THEN NULL ELSE COALESCE(EXCLUDED.phone, l.phone) END")},
           ${ifFresh("details", "l.details || EXCLUDED.details")},
           last_event_at = GREATEST(l.last_event_at, EXCLUDED.last_event_at),
           ${EARLIEST_ARRIVAL},
           updated_at = now()
         WHERE ${FRESH} OR ${ARRIVAL_EARLIER}
         RETURNING id, created_at, ${RESPONSE_STALE}
       ), lead AS (
         SELECT id, created_at, "responseStale" FROM upserted
         UNION ALL
         SELECT id, created_at, false FROM leads WHERE tenant_id = $1::uuid AND provider = $3 AND external_lead_id = $4
         LIMIT 1
       ), messages AS (${INSERT_MESSAGES("$11")})
       SELECT id, "responseStale" FROM lead`,
      [
        key.tenantId,
        key.connectionId,
        key.provider,
        key.externalLeadId,
        contact.name ?? null,
        contact.email ?? null,
        contact.phone ?? null,
        JSON.stringify(details),
        eventAt,
        receiptId,
        messageRows(messages),
        contact.firstName ?? null,
        service ?? null,
        arrival.receivedAt,
        arrival.providerCreatedAt,
        arrival.awaitsResponse,
      ],
    );
    if (rows[0]) return rows[0];
    // The lead was inserted by a concurrent transaction after this statement's snapshot: read it
    // now, and add the messages to it.
    const leadId = await this.idOf(key);
    await this.addMessages(key.tenantId, leadId, messages);
    return { id: leadId, responseStale: false };
  }

  /** The lead's merge fields, as its lead-upserts stored them; undefined when it is not stored. */
  async replyFields(key: Omit<LeadKey, "connectionId">): Promise<LeadReplyFields | undefined> {
    const { rows } = await this.sql.query<LeadReplyFields>(
      `SELECT id, name, first_name AS "firstName", service FROM leads
       WHERE tenant_id = $1::uuid AND provider = $2 AND external_lead_id = $3`,
      [key.tenantId, key.provider, key.externalLeadId],
    );
    return rows[0];
  }

  private async idOf(key: LeadKey): Promise<string> {
    const { rows } = await this.sql.query<{ id: string }>(
      "SELECT id FROM leads WHERE tenant_id = $1::uuid AND provider = $2 AND external_lead_id = $3",
      [key.tenantId, key.provider, key.externalLeadId],
    );
    if (!rows[0]) throw new Error("lead vanished during its upsert");
    return rows[0].id;
  }

  /**
   * Makes sure the lead exists (a placeholder when only a message is known), records the event time
   * and adds its `messages` (once each, by the provider's message id), in one statement.
   */
  async touch(
    key: LeadKey,
    eventAt: Date,
    messages: LeadMessage[] = [],
    arrival: LeadArrival = { receivedAt: eventAt, providerCreatedAt: eventAt, awaitsResponse: false },
  ): Promise<UpsertedLead> {
    const { rows } = await this.sql.query<UpsertedLead>(
      `WITH lead AS (
         INSERT INTO leads AS l (tenant_id, connection_id, provider, external_lead_id, status, last_event_at,
                                 received_at, provider_created_at, awaits_response)
         VALUES ($1::uuid, $2::uuid, $3, $4, 'placeholder', $5, $7, $8, $9)
         ON CONFLICT (tenant_id, provider, external_lead_id) DO UPDATE SET
           last_event_at = GREATEST(l.last_event_at, EXCLUDED.last_event_at), ${EARLIEST_ARRIVAL}, updated_at = now()
         RETURNING id, created_at, ${RESPONSE_STALE}
       ), messages AS (${INSERT_MESSAGES("$6")})
       SELECT id, "responseStale" FROM lead`,
      [
        key.tenantId,
        key.connectionId,
        key.provider,
        key.externalLeadId,
        eventAt,
        messageRows(messages),
        arrival.receivedAt,
        arrival.providerCreatedAt,
        arrival.awaitsResponse,
      ],
    );
    return rows[0]!;
  }

  /** Adds messages once each, keyed by the provider's message id. */
  private async addMessages(tenantId: string, leadId: string, messages: LeadMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.sql.query(
      `WITH lead AS (SELECT id, created_at FROM leads WHERE tenant_id = $1::uuid AND id = $2::uuid)
       ${INSERT_MESSAGES("$3")}`,
      [tenantId, leadId, messageRows(messages)],
    );
  }

  /**
   * Records a phone opt-in (with its number, when known) or opt-out (the phone is cleared), unless
   * the stored consent comes from a newer event. Consent events are ordered by the earlier of their
   * own time and `receivedAt` (when Leadgate stored the event): a time in the future, forged or
   * broken, counts as the moment it arrived, so it cannot outrank every later opt-out, while a late
   * retry of an old opt-in keeps its old time and never re-grants consent after an opt-out. At the
   * same time an opt-out wins, whichever is recorded last.
   */
  async recordPhoneConsent(
    tenantId: string,
    leadId: string,
    consent: PhoneConsent,
    receivedAt: Date,
  ): Promise<void> {
    await this.sql.query(
      `UPDATE leads SET phone_consent = $3, phone_consent_at = LEAST($4::timestamptz, $6::timestamptz),
         phone = CASE WHEN $3 THEN COALESCE($5, phone) ELSE NULL END, updated_at = now()
       WHERE tenant_id = $1::uuid AND id = $2::uuid
         AND (phone_consent_at IS NULL OR phone_consent_at < LEAST($4::timestamptz, $6::timestamptz)
              OR (phone_consent_at = LEAST($4::timestamptz, $6::timestamptz) AND NOT $3))`,
      [tenantId, leadId, consent.granted, consent.at, consent.phone ?? null, receivedAt],
    );
  }

  /** The oldest and newest stored messages in the provider's list order, or null when none is. */
  async storedHistory(key: LeadKey): Promise<StoredHistory | null> {
    const { rows } = await this.sql.query<{
      complete: boolean;
      oldest_id: string;
      oldest_cursor: string;
      newest_id: string;
      newest_cursor: string;
    }>(
      `SELECT l.history_complete AS complete, o.external_id AS oldest_id, o.cursor AS oldest_cursor,
              n.external_id AS newest_id, n.cursor AS newest_cursor
       FROM leads l
       CROSS JOIN LATERAL (SELECT external_id, cursor FROM lead_messages
                           WHERE tenant_id = l.tenant_id AND lead_id = l.id AND lead_created_at = l.created_at AND position IS NOT NULL
                           ORDER BY position LIMIT 1) o
       CROSS JOIN LATERAL (SELECT external_id, cursor FROM lead_messages
                           WHERE tenant_id = l.tenant_id AND lead_id = l.id AND lead_created_at = l.created_at AND position IS NOT NULL
                           ORDER BY position DESC LIMIT 1) n
       WHERE l.tenant_id = $1::uuid AND l.provider = $2 AND l.external_lead_id = $3`,
      [key.tenantId, key.provider, key.externalLeadId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      oldest: { externalId: row.oldest_id, cursor: row.oldest_cursor },
      newest: { externalId: row.newest_id, cursor: row.newest_cursor },
      complete: row.complete,
    };
  }

  /**
   * Adds messages in the provider's list order. Each run is placed by a message it shares with the
   * stored list, else next to its stored neighbour (`after` / `before`), else, with none stored, from
   * 0. The lead is locked meanwhile, so concurrent runs of one lead place their messages alike; a run
   * that fits nowhere (the list moved on since it was read) is retried, to be read again.
   */
  async addHistory(tenantId: string, leadId: string, history: LeadHistory): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await tx.$queryRawUnsafe(
        "SELECT 1 FROM leads WHERE tenant_id = $1::uuid AND id = $2::uuid FOR UPDATE",
        tenantId,
        leadId,
      );
      for (const run of history.runs) {
        if (run.messages.length === 0) continue;
        const [{ base }] = await tx.$queryRawUnsafe<[{ base: number | null }]>(
          PLACE_RUN_SQL,
          tenantId,
          leadId,
          JSON.stringify(run.messages.map((message) => message.externalId)),
          run.after ?? null,
          run.before ?? null,
        );
        if (base === null) throw new RetryableError("lead_history_moved");
        await tx.$executeRawUnsafe(
          `INSERT INTO lead_messages (tenant_id, lead_id, lead_created_at, external_id, direction, author, text, sent_at,
                                      position, cursor)
           SELECT $1::uuid, $2::uuid, l.created_at, m.external_id, m.direction, m.author, m.text, m.sent_at, m.position, m.cursor
           FROM leads l, jsonb_to_recordset($3::jsonb)
             AS m(external_id text, direction text, author text, text text, sent_at timestamptz, position int, cursor text)
           WHERE l.tenant_id = $1::uuid AND l.id = $2::uuid
           ON CONFLICT (lead_id, external_id, lead_created_at) DO UPDATE SET position = EXCLUDED.position, cursor = EXCLUDED.cursor
           WHERE lead_messages.position IS NULL`,
          tenantId,
          leadId,
          JSON.stringify(runRows(run, base)),
        );
      }
      if (history.complete) {
        await tx.$executeRawUnsafe(
          "UPDATE leads SET history_complete = true WHERE tenant_id = $1::uuid AND id = $2::uuid",
          tenantId,
          leadId,
        );
      }
    });
  }

  /**
   * The lead as stored, as a CRM delivery carries it (api.md, "CRM deliveries", plus its messages in
   * the provider's order: what the customer wrote), and the receipt that first made it complete.
   */
  async find(
    tenantId: string,
    provider: string,
    externalLeadId: string,
  ): Promise<{ lead: JsonObject; createdByReceiptId: string | null } | undefined> {
    const { rows } = await this.sql.query<JsonObject & { created_by_receipt_id: string | null }>(
      `SELECT l.id, l.name, l.email, l.phone, l.phone_consent AS "phoneConsent", l.status, l.details,
              l.last_event_at AS "lastEventAt",
              (SELECT COALESCE(json_agg(json_build_object('direction', m.direction, 'author', m.author, 'text', m.text,
                                                          'sentAt', m.sent_at)
                                        ORDER BY m.position NULLS LAST, m.sent_at, m.external_id), '[]'::json)
               FROM lead_messages m
               WHERE m.lead_id = l.id AND m.tenant_id = l.tenant_id AND m.lead_created_at = l.created_at) AS messages,
              l.created_by_receipt_id
       FROM leads l WHERE l.tenant_id = $1::uuid AND l.provider = $2 AND l.external_lead_id = $3`,
      [tenantId, provider, externalLeadId],
    );
    if (!rows[0]) return undefined;
    const { created_by_receipt_id: createdByReceiptId, ...lead } = rows[0];
    return { lead, createdByReceiptId };
  }
}

/** An upserted lead's recorded first response counts from another time than SINCE (to the millisecond). */
const RESPONSE_STALE = `(abs(first_response_seconds - GREATEST(0, extract(epoch FROM first_response_at - ${SINCE}))::float8)
  >= 0.001) IS TRUE AS "responseStale"`;

/** An upsert's event is not older than the stored data (or fills a placeholder): its fields apply. */
const FRESH = "(l.status = 'placeholder' OR l.last_event_at <= EXCLUDED.last_event_at)";
const ifFresh = (column: string, value: string) =>
  `${column} = CASE WHEN ${FRESH} THEN ${value} ELSE l.${column} END`;
/** A lead's first receipt and first provider time: the earliest seen, whatever the event's age (LEAST skips NULL). */
const EARLIEST_ARRIVAL = `received_at = LEAST(l.received_at, EXCLUDED.received_at),
  provider_created_at = LEAST(l.provider_created_at, EXCLUDED.provider_created_at)`;
const ARRIVAL_EARLIER = `(l.received_at IS DISTINCT FROM LEAST(l.received_at, EXCLUDED.received_at)
  OR l.provider_created_at IS DISTINCT FROM LEAST(l.provider_created_at, EXCLUDED.provider_created_at))`;

/**
 * The position before a run's first message (its messages take base + 1, base + 2, ...): from a
 * message it shares with the stored list, else its stored neighbour, else 0 when the lead has no
 * message in list order yet; null when it fits nowhere.
 */
const PLACE_RUN_SQL = `
  WITH stored AS (
    SELECT external_id, position FROM lead_messages
    WHERE tenant_id = $1::uuid AND lead_id = $2::uuid AND position IS NOT NULL
      -- The lead's own month: Postgres then reads one partition, not every month's index.
      AND lead_created_at = (SELECT created_at FROM leads WHERE tenant_id = $1::uuid AND id = $2::uuid)
  ), run AS (
    SELECT id, index FROM jsonb_array_elements_text($3::jsonb) WITH ORDINALITY AS r(id, index)
  )
  SELECT COALESCE(
    (SELECT s.position - r.index FROM stored s JOIN run r ON r.id = s.external_id LIMIT 1),
    (SELECT position FROM stored WHERE external_id = $4),
    (SELECT position - (SELECT count(*) FROM run) - 1 FROM stored WHERE external_id = $5),
    (SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM stored))
  )::int AS base`;

function runRows(run: HistoryRun, base: number) {
  return run.messages.map((message: LeadMessage, index) => ({
    ...messageRow(message),
    position: base + index + 1,
    cursor: message.cursor ?? null,
  }));
}

/**
 * Inserts the messages of `$<n>` (messageRows) to the lead of the statement's `lead` CTE (id and
 * created_at, the partition key), once each (keyed by the provider's message id); `$1` is the tenant.
 */
const INSERT_MESSAGES = (messages: string) => `
  INSERT INTO lead_messages (tenant_id, lead_id, lead_created_at, external_id, direction, author, text, sent_at)
  SELECT $1::uuid, lead.id, lead.created_at, m.external_id, m.direction, m.author, m.text, m.sent_at
  FROM lead, jsonb_to_recordset(${messages}::jsonb)
    AS m(external_id text, direction text, author text, text text, sent_at timestamptz)
  ON CONFLICT (lead_id, external_id, lead_created_at) DO NOTHING`;

function messageRows(messages: LeadMessage[]): string {
  return JSON.stringify(messages.map(messageRow));
}

/** A message as the statements' `jsonb_to_recordset` reads it. */
function messageRow(message: LeadMessage) {
  return {
    external_id: message.externalId,
    direction: message.direction,
    author: message.author ?? null,
    text: message.text ?? null,
    sent_at: message.sentAt.toISOString(),
  };
}
