// POST /admin/leads/{id}/mark-replied (api.md "First replies: templates, business hours, speed to
// lead"): the business answered the lead outside the provider. It records the lead's first response
// (`by: "business"`, at `at`), unless an earlier one exists (FirstResponses.recordIn,
// the one writer), audits `lead.mark_replied` with `via`, and for a Yelp lead creates the keyed job
// that tells Yelp (provider-mark-replied, one per lead: a second call creates none), all in one
// transaction.
import { Injectable } from "@nestjs/common";
import { ApiPropertyOptional } from "@nestjs/swagger";
import { IsIn } from "class-validator";
import type { Principal, TenantScope } from "../auth/principal.js";
import { tenantParam } from "../auth/principal.js";
import { DateTimeField, Optional, validationFailed } from "../common/validation.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions } from "../database/transactions.js";
import { JobQueue } from "../jobs/job-queue.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import {
  type CountedResponse,
  countResponse,
  type FirstResponse,
  FirstResponses,
} from "../leads/first-responses.js";
import { effectiveSettings, type ReplySettings } from "../replies/reply-settings.js";
import { capabilities } from "../providers/capabilities.js";
import type { Provider } from "../providers/provider-event.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { notFound } from "../common/id.pipe.js";

export const MARK_REPLIED_VIA = ["phone", "email", "other"] as const;

/** How far in the future `at` may be: the caller's clock may run a little ahead of ours. */
export const MARK_REPLIED_SKEW_SECONDS = 60;

/** Reads and counts this often when a lead-upsert moves the lead's creation time meanwhile. */
const TRIES = 3;

export class MarkRepliedBody {
  @ApiPropertyOptional({
    description: `when the business answered (ISO 8601; default now); not before the lead was created at the provider, not later than now + ${MARK_REPLIED_SKEW_SECONDS} s`,
  })
  @Optional()
  @DateTimeField("at")
  at?: Date;

  @ApiPropertyOptional({ enum: MARK_REPLIED_VIA, description: "how the business answered (audited)" })
  @Optional()
  @IsIn(MARK_REPLIED_VIA)
  via?: (typeof MARK_REPLIED_VIA)[number];
}

interface MarkedLead {
  id: string;
  tenantId: string;
  connectionId: string;
  provider: Provider;
  since: Date;
  settings: ReplySettings;
  clientDefaults: ReplySettings;
  tenantDefaults: ReplySettings;
}

@Injectable()
export class LeadMarkReplied {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly firstResponses: FirstResponses,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    private readonly audit: AuditRepository,
  ) {}

  /** Marks the scope's lead replied; 404 when the scope has no such lead, 400 for a bad `at`. */
  async mark(principal: Principal, scope: TenantScope, id: string, body: MarkRepliedBody): Promise<void> {
    const now = new Date();
    const at = body.at ?? now;
    if (at.getTime() > now.getTime() + MARK_REPLIED_SKEW_SECONDS * 1000) {
      throw validationFailed({ at: ["at must not be in the future"] });
    }
    // The seconds are counted before the transaction (business hours are never counted inside one);
    // a lead-upsert that moves the lead's creation time meanwhile makes it read and count again.
    for (let tried = 1; ; tried++) {
      const lead = await this.read(scope, id);
      if (at < lead.since) {
        throw validationFailed({
          at: [`at must not be before the lead was created (${lead.since.toISOString()})`],
        });
      }
      const hours = effectiveSettings(lead.settings, {
        client: lead.clientDefaults,
        tenant: lead.tenantDefaults,
      }).businessHours;
      const counted = countResponse(lead.since, at, hours);
      const done = await this.write(
        principal,
        lead,
        { at, by: "business" },
        counted,
        body.via ?? null,
        tried,
      );
      if (done) return;
    }
  }

  private async read(scope: TenantScope, id: string): Promise<MarkedLead> {
    const { rows } = await this.prisma.pool.query<MarkedLead>(
      `SELECT l.id, l.tenant_id AS "tenantId", l.connection_id AS "connectionId", l.provider,
              COALESCE(l.provider_created_at, l.received_at, l.created_at) AS since, c.settings,
              cl.defaults AS "clientDefaults", t.defaults AS "tenantDefaults"
       FROM leads l JOIN connections c ON c.id = l.connection_id AND c.tenant_id = l.tenant_id
       JOIN clients cl ON cl.id = c.client_id JOIN tenants t ON t.id = l.tenant_id
       WHERE l.id = $1::uuid AND ($2::uuid IS NULL OR l.tenant_id = $2::uuid)`,
      [id, tenantParam(scope)],
    );
    if (!rows[0]) throw notFound("lead");
    return rows[0];
  }

  /**
   * The response, its audit entry and the job that tells the provider, in one transaction; false
   * (rolled back) when the lead's creation time moved since it was counted, unless this is the
   * last try (then the response is left unrecorded rather than counted from a stale time).
   */
  private async write(
    principal: Principal,
    lead: MarkedLead,
    response: FirstResponse,
    counted: CountedResponse,
    via: string | null,
    tried: number,
  ): Promise<boolean> {
    const written = await this.transactions.run(async (tx) => {
      const recorded = await this.firstResponses.recordIn(tx, lead.tenantId, lead.id, response, counted);
      if (recorded === "moved" && tried < TRIES) return undefined;
      await this.audit.record(tx, principal, {
        action: "lead.mark_replied",
        tenantId: lead.tenantId,
        targetType: "lead",
        targetId: lead.id,
        details: { at: response.at.toISOString(), via },
      });
      const kept = recorded === "moved" ? undefined : recorded;
      if (!capabilities(lead.provider).marksReplied) return { recorded: kept, jobs: [] };
      // One job per lead: a key that exists already creates nothing.
      const jobs = await this.state.create(
        [
          {
            tenantId: lead.tenantId,
            connectionId: lead.connectionId,
            operation: "provider-mark-replied",
            jobKey: jobKey("provider-mark-replied", lead.id),
          },
        ],
        tx,
      );
      return { recorded: kept, jobs };
    });
    if (!written) return false;
    if (written.recorded) this.firstResponses.observe(written.recorded);
    await this.queue.enqueue(written.jobs); // after commit; the dispatcher covers a failure here
    return true;
  }
}
