// Static Forms after ingest: the submission is the whole lead (no API to ask), and there is no
// channel to reply on.
import { Injectable } from "@nestjs/common";
import { PermanentError } from "../../common/outbound/errors.js";
import { objectOrEmpty } from "../envelope.js";
import type { InboxEvent, LeadUpdate, ProviderInbox, ReplyOutcome } from "../provider-inbox.js";
import { contactFromForm } from "./contact-fields.js";

/**
 * A submission: its form fields mapped to contact fields (the others kept as `details.form`), its
 * message the lead's first inbound message, keyed by the submission id.
 */
export function staticFormsLeadUpdate(event: InboxEvent): LeadUpdate {
  const { payload, occurredAt } = event;
  if (!payload) throw new PermanentError("payload_purged"); // retention keeps it while a job needs it
  const { contact, rest } = contactFromForm(objectOrEmpty(payload.formData));
  return {
    profile: { contact, details: { form: rest } },
    lastEventAt: occurredAt,
    messages: contact.message
      ? [
          {
            externalId: event.eventId ?? event.leadId,
            direction: "inbound",
            author: contact.name ?? null,
            text: contact.message,
            sentAt: occurredAt,
          },
        ]
      : [],
  };
}

@Injectable()
export class StaticFormsInbox implements ProviderInbox {
  readonly provider = "staticforms" as const;
  /** The form carries the lead, and there is no reply channel. */
  readonly needsCredentials = { leadUpdate: false, reply: false };

  leadUpdate(event: InboxEvent): Promise<LeadUpdate> {
    return Promise.resolve(event).then(staticFormsLeadUpdate);
  }

  reply(): Promise<ReplyOutcome> {
    return Promise.resolve({ status: "skipped", ref: "no_reply_channel" });
  }
}
