import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import type { JsonObject, Provider } from "../providers/provider-event.js";
import type { Contact } from "./contact-fields.js";

export interface LeadKey {
  tenantId: string;
  connectionId: string;
  provider: Provider;
  externalLeadId: string;
}

export interface LeadMessageInput {
  externalId: string;
  direction: "inbound" | "outbound";
  author?: string | null;
  text?: string | null;
  sentAt: Date;
}

/** The lead store (our CRM-side record), keyed by (tenantId, provider, externalLeadId). */
@Injectable()
export class LeadsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Upserts the lead's contact data as of `eventAt`. An older event never overwrites newer data;
   * a placeholder (a message that came before its lead) is always filled.
   */
  async upsertContact(key: LeadKey, contact: Contact, details: JsonObject, eventAt: Date): Promise<string> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO leads AS l (tenant_id, connection_id, provider, external_lead_id, status, name, email, phone, details, last_event_at)
      VALUES (${key.tenantId}::uuid, ${key.connectionId}::uuid, ${key.provider}, ${key.externalLeadId}, 'open',
              ${contact.name ?? null}, ${contact.email ?? null}, ${contact.phone ?? null}, ${JSON.stringify(details)}::jsonb, ${eventAt})
      ON CONFLICT (tenant_id, provider, external_lead_id) DO UPDATE SET
        status = 'open',
        name = COALESCE(EXCLUDED.name, l.name),
        email = COALESCE(EXCLUDED.email, l.email),
        phone = COALESCE(EXCLUDED.phone, l.phone),
        details = l.details || EXCLUDED.details,
        last_event_at = GREATEST(l.last_event_at, EXCLUDED.last_event_at),
        updated_at = now()
      WHERE l.status = 'placeholder' OR l.last_event_at <= EXCLUDED.last_event_at
      RETURNING id`;
    return rows[0]?.id ?? this.idOf(key);
  }

  /** Makes sure the lead exists (a placeholder when only a message is known) and records the event time. */
  async touch(key: LeadKey, eventAt: Date): Promise<string> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO leads AS l (tenant_id, connection_id, provider, external_lead_id, status, last_event_at)
      VALUES (${key.tenantId}::uuid, ${key.connectionId}::uuid, ${key.provider}, ${key.externalLeadId}, 'placeholder', ${eventAt})
      ON CONFLICT (tenant_id, provider, external_lead_id) DO UPDATE SET
        last_event_at = GREATEST(l.last_event_at, EXCLUDED.last_event_at), updated_at = now()
      RETURNING id`;
    return rows[0]!.id;
  }

  /** Adds messages once each, keyed by the provider's message id. */
  async addMessages(tenantId: string, leadId: string, messages: LeadMessageInput[]): Promise<void> {
    if (messages.length === 0) return;
    await this.prisma.leadMessage.createMany({
      data: messages.map((message) => ({
        tenantId,
        leadId,
        ...message,
        author: message.author ?? null,
        text: message.text ?? null,
      })),
      skipDuplicates: true,
    });
  }

  private async idOf(key: LeadKey): Promise<string> {
    const lead = await this.prisma.lead.findUniqueOrThrow({
      where: {
        tenantId_provider_externalLeadId: {
          tenantId: key.tenantId,
          provider: key.provider,
          externalLeadId: key.externalLeadId,
        },
      },
      select: { id: true },
    });
    return lead.id;
  }
}
