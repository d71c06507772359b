// provider-mark-replied: tells the provider (Yelp: capability `marksReplied`) that the business
// answered a lead outside it (api.md "First replies": POST /admin/leads/{id}/mark-replied), with the
// connection's token, through the provider's rules (ProviderInbox.markReplied). The job belongs to
// the connection and names the lead in its key (`provider-mark-replied:<lead id>`), one per lead;
// how the business answered (`via`) is read from the audit entry of the mark-replied that made the
// job (the first one of the lead). Marking twice at Yelp is harmless, so a re-run needs no record.
import { Injectable } from "@nestjs/common";
import { PermanentError } from "../../common/outbound/errors.js";
import { PrismaService } from "../../database/prisma.service.js";
import { InboxRegistry } from "../../providers/inbox-registry.js";
import type { ConnectionJobContext } from "../job-context.js";
import type { Processor } from "../processor.js";

const PREFIX = "provider-mark-replied:";

/** The lead id of a provider-mark-replied job key. */
export function markRepliedLeadOf(jobKey: string): string {
  if (!jobKey.startsWith(PREFIX)) throw new Error(`not a provider-mark-replied job key: ${jobKey}`);
  return jobKey.slice(PREFIX.length);
}

@Injectable()
export class ProviderMarkRepliedProcessor implements Processor<ConnectionJobContext> {
  readonly operation = "provider-mark-replied" as const;

  constructor(
    private readonly prisma: PrismaService,
    private readonly inboxes: InboxRegistry,
  ) {}

  needsCredentials(): boolean {
    return true;
  }

  async run({ job, connection }: ConnectionJobContext): Promise<void> {
    const inbox = this.inboxes.get(connection.provider);
    if (!inbox.markReplied) throw new PermanentError("mark_replied_unsupported");
    const leadId = markRepliedLeadOf(job.jobKey);
    const { rows } = await this.prisma.pool.query<{ externalLeadId: string; via: string | null }>(
      `SELECT l.external_lead_id AS "externalLeadId",
              (SELECT a.details->>'via' FROM audit_entries a
               WHERE a.tenant_id = l.tenant_id AND a.action = 'lead.mark_replied' AND a.target_id = l.id::text
               ORDER BY a.created_at LIMIT 1) AS via
       FROM leads l WHERE l.tenant_id = $1::uuid AND l.id = $2::uuid AND l.connection_id = $3::uuid`,
      [connection.tenantId, leadId, connection.id],
    );
    if (!rows[0]) throw new PermanentError("missing_lead");
    await inbox.markReplied({
      leadId: rows[0].externalLeadId,
      token: connection.accessToken,
      via: rows[0].via,
    });
  }
}
