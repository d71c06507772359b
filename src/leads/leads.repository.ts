import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import type { JsonObject, Provider } from "../providers/provider-event.js";
import type { Contact, LeadMessage } from "../providers/provider-follow-up.js";

export interface LeadKey {
  tenantId: string;
  connectionId: string;
  provider: Provider;
  externalLeadId: string;
}

/** The lead store (our CRM-side record), keyed by (tenantId, provider, externalLeadId). */
@Injectable()
export class LeadsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Upserts the lead's contact data as of `eventAt`, from the event of receipt `receiptId`. An older
   * event never overwrites newer data; a placeholder (a message that came before its lead) is always
   * filled. The receipt that makes the lead complete for the first time (inserts it, or fills the
   * placeholder) is kept as `created_by_receipt_id`, once: its CRM delivery is `lead.created`.
   */
  async upsertContact(
    key: LeadKey,
    receiptId: string,
    contact: Contact,
    details: JsonObject,
    eventAt: Date,
  ): Promise<string> {
    const { rows } = await this.prisma.pool.query<{ id: string }>(
      `WITH upserted AS (
         INSERT INTO leads AS l (tenant_id, connection_id, provider, external_lead_id, status, name, email, phone, details,
                                 last_event_at, created_by_receipt_id)
         VALUES ($1::uuid, $2::uuid, $3, $4, 'open', $5, $6, $7, $8::jsonb, $9, $10::uuid)
         ON CONFLICT (tenant_id, provider, external_lead_id) DO UPDATE SET
           status = 'open',
           created_by_receipt_id = CASE WHEN l.status = 'placeholder' THEN COALESCE(l.created_by_receipt_id, EXCLUDED.created_by_receipt_id)
                                        ELSE l.created_by_receipt_id END,
           name = COALESCE(EXCLUDED.name, l.name),
           email = COALESCE(EXCLUDED.email, l.email),
           phone = COALESCE(EXCLUDED.phone, l.phone),
           details = l.details || EXCLUDED.details,
           last_event_at = GREATEST(l.last_event_at, EXCLUDED.last_event_at),
           updated_at = now()
         WHERE l.status = 'placeholder' OR l.last_event_at <= EXCLUDED.last_event_at
         RETURNING id
       )
       SELECT id FROM upserted
       UNION ALL
       SELECT id FROM leads WHERE tenant_id = $1::uuid AND provider = $3 AND external_lead_id = $4
       LIMIT 1`,
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
      ],
    );
    // The lead was inserted by a concurrent transaction after this statement's snapshot: read it now.
    return rows[0]?.id ?? this.idOf(key);
  }

  private async idOf(key: LeadKey): Promise<string> {
    const { rows } = await this.prisma.pool.query<{ id: string }>(
      "SELECT id FROM leads WHERE tenant_id = $1::uuid AND provider = $2 AND external_lead_id = $3",
      [key.tenantId, key.provider, key.externalLeadId],
    );
    if (!rows[0]) throw new Error("lead vanished during its upsert");
    return rows[0].id;
  }

  /** Makes sure the lead exists (a placeholder when only a message is known) and records the event time. */
  async touch(key: LeadKey, eventAt: Date): Promise<string> {
    const { rows } = await this.prisma.pool.query<{ id: string }>(
      `INSERT INTO leads AS l (tenant_id, connection_id, provider, external_lead_id, status, last_event_at)
       VALUES ($1::uuid, $2::uuid, $3, $4, 'placeholder', $5)
       ON CONFLICT (tenant_id, provider, external_lead_id) DO UPDATE SET
         last_event_at = GREATEST(l.last_event_at, EXCLUDED.last_event_at), updated_at = now()
       RETURNING id`,
      [key.tenantId, key.connectionId, key.provider, key.externalLeadId, eventAt],
    );
    return rows[0]!.id;
  }

  /** Adds messages once each, keyed by the provider's message id. */
  async addMessages(tenantId: string, leadId: string, messages: LeadMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.prisma.pool.query(
      `INSERT INTO lead_messages (tenant_id, lead_id, external_id, direction, author, text, sent_at)
       SELECT $1::uuid, $2::uuid, m.external_id, m.direction, m.author, m.text, m.sent_at
       FROM jsonb_to_recordset($3::jsonb) AS m(external_id text, direction text, author text, text text, sent_at timestamptz)
       ON CONFLICT (lead_id, external_id) DO NOTHING`,
      [
        tenantId,
        leadId,
        JSON.stringify(
          messages.map((message) => ({
            external_id: message.externalId,
            direction: message.direction,
            author: message.author ?? null,
            text: message.text ?? null,
            sent_at: message.sentAt.toISOString(),
          })),
        ),
      ],
    );
  }

  /**
   * The lead as stored, as a CRM delivery carries it (api.md, "CRM deliveries"), and the receipt that
   * first made it complete.
   */
  async find(
    tenantId: string,
    provider: string,
    externalLeadId: string,
  ): Promise<{ lead: JsonObject; createdByReceiptId: string | null } | undefined> {
    const { rows } = await this.prisma.pool.query<JsonObject & { created_by_receipt_id: string | null }>(
      // phoneConsent: not tracked yet (null: unknown), see the README's provider notes.
      `SELECT id, name, email, phone, NULL::boolean AS "phoneConsent", status, details,
              last_event_at AS "lastEventAt", created_by_receipt_id
       FROM leads WHERE tenant_id = $1::uuid AND provider = $2 AND external_lead_id = $3`,
      [tenantId, provider, externalLeadId],
    );
    if (!rows[0]) return undefined;
    const { created_by_receipt_id: createdByReceiptId, ...lead } = rows[0];
    return { lead, createdByReceiptId };
  }
}
