// lead-upsert: the event's effect on the tenant's lead record, keyed by (tenant, provider, lead id).
// Static Forms and Thumbtack carry the lead; Yelp's webhook is only a trigger, so the lead and its
// events are fetched with the connection's token. Re-running leaves the same rows.
import { Injectable } from "@nestjs/common";
import { contactFromForm, type Contact } from "../../leads/contact-fields.js";
import { type LeadKey, type LeadMessageInput, LeadsRepository } from "../../leads/leads.repository.js";
import { firstTime, isObject } from "../../providers/envelope.js";
import type { JsonObject, JsonValue } from "../../providers/provider-event.js";
import { YelpClient } from "../../providers/yelp/yelp.client.js";
import { PermanentError } from "../../common/outbound/errors.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";

const text = (value: JsonValue | undefined): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
const object = (value: JsonValue | undefined): JsonObject => (isObject(value) ? value : {});

@Injectable()
export class LeadUpsertProcessor implements Processor {
  readonly operation = "lead-upsert" as const;

  constructor(
    private readonly leads: LeadsRepository,
    private readonly yelp: YelpClient,
  ) {}

  async run({ receipt, connection }: JobContext): Promise<void> {
    const key: LeadKey = {
      tenantId: connection.tenantId,
      connectionId: connection.id,
      provider: receipt.provider,
      externalLeadId: receipt.leadId,
    };
    switch (receipt.provider) {
      case "staticforms":
        return this.staticForms(key, receipt.payload, receipt.eventId ?? receipt.leadId, receipt.occurredAt);
      case "thumbtack":
        return this.thumbtack(key, receipt.payload, receipt.occurredAt);
      case "yelp":
        return this.fromYelp(key, connection.accessToken, receipt.occurredAt);
    }
  }

  private async staticForms(key: LeadKey, payload: JsonObject | null, submissionId: string, at: Date) {
    if (!payload) throw new PermanentError("payload_purged"); // retention keeps it while a job needs it
    const { contact, rest } = contactFromForm(object(payload.formData));
    const leadId = await this.leads.upsertContact(key, contact, { form: rest }, at);
    if (contact.message) {
      await this.leads.addMessages(key.tenantId, leadId, [
        {
          externalId: submissionId,
          direction: "inbound",
          author: contact.name ?? null,
          text: contact.message,
          sentAt: at,
        },
      ]);
    }
  }

  private async thumbtack(key: LeadKey, payload: JsonObject | null, at: Date) {
    if (!payload) throw new PermanentError("payload_purged");
    const messageId = payload.messageID;
    if (typeof messageId === "string" || typeof messageId === "number") {
      // A message may arrive before its negotiation: keep it on a placeholder lead, filled later.
      const leadId = await this.leads.touch(key, at);
      const fromCustomer = payload.from === "Customer";
      const author = object(fromCustomer ? payload.customer : payload.business).displayName;
      await this.leads.addMessages(key.tenantId, leadId, [
        {
          externalId: String(messageId),
          direction: fromCustomer ? "inbound" : "outbound",
          author: text(author) ?? null,
          text: text(payload.text) ?? null,
          sentAt: at,
        },
      ]);
      return;
    }
    const customer = object(payload.customer);
    const contact: Contact = {};
    const name =
      text(customer.displayName) ??
      text(customer.name) ??
      ([text(customer.firstName), text(customer.lastName)].filter(Boolean).join(" ") || undefined);
    if (name) contact.name = name;
    const phone = text(customer.phone);
    if (phone) contact.phone = phone;
    const details: JsonObject = {};
    for (const field of ["request", "category", "estimate", "leadPrice", "status", "test"]) {
      if (payload[field] !== undefined) details[field] = payload[field];
    }
    await this.leads.upsertContact(key, contact, details, at);
  }

  private async fromYelp(key: LeadKey, token: string | undefined, at: Date) {
    const [lead, events] = await Promise.all([
      this.yelp.getLead(token, key.externalLeadId),
      this.yelp.getEvents(token, key.externalLeadId),
    ]);
    const contact: Contact = {};
    const name = text(lead.user?.display_name);
    const email = text(lead.temporary_email_address);
    const phone = text(lead.phone_number) ?? text(lead.temporary_phone_number);
    if (name) contact.name = name;
    if (email) contact.email = email;
    if (phone) contact.phone = phone;
    const details: JsonObject = {};
    for (const field of [
      "conversation_id",
      "project",
      "time_created",
      "temporary_email_address_expiry",
    ] as const) {
      const value = lead[field];
      if (value !== undefined) details[field] = value;
    }
    const leadId = await this.leads.upsertContact(
      key,
      contact,
      details,
      firstTime(lead.last_event_time, at.toISOString()),
    );
    const messages: LeadMessageInput[] = events.map((event) => ({
      externalId: event.id,
      direction: event.user_type === "BIZ" ? "outbound" : "inbound",
      author: event.user_display_name ?? null,
      text: event.event_content?.text ?? event.event_content?.fallback_text ?? null,
      sentAt: firstTime(event.time_created, at.toISOString()),
    }));
    await this.leads.addMessages(key.tenantId, leadId, messages);
  }
}
