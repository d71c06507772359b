// POST /admin/connections/{id}/reply-preview (api.md "First replies"): the first reply a lead would
// get, rendered as the worker renders it (plannedReply with mergeValues), for a stored lead of the
// connection or a sample lead, with the saved or an unsaved auto-response. Writes nothing.
import { ApiProperty } from "@nestjs/swagger";
import { Injectable } from "@nestjs/common";
import { type TenantScope } from "../../auth/principal.js";
import { AppError } from "../../common/app-error.js";
import { PrismaService } from "../../database/prisma.service.js";
import { hasApi } from "../../providers/capabilities.js";
import type { Provider } from "../../providers/provider-event.js";
import { type LeadMergeFields, mergeValues } from "../../replies/merge-values.js";
import {
  type AutoResponse,
  effectiveSettings,
  plannedReply,
  type ReplySettings,
  type ReplyVariant,
} from "../../replies/reply-settings.js";
import { notFound } from "../../common/id.pipe.js";
import { autoResponseErrors, delayErrors, refuse } from "../../replies/reply-settings-check.js";
import { ConnectionsAdminService, inheritedOf } from "./connections-admin.service.js";
import type { ReplyPreviewBody } from "../../connections/connections.dto.js";

/** The lead a preview renders for when it names none. */
export const SAMPLE_LEAD: LeadMergeFields = { firstName: "Marta", name: "Marta K.", service: "Roof repair" };

export class ReplyPreview {
  @ApiProperty()
  text!: string;

  @ApiProperty({ enum: ["business-hours", "after-hours"] })
  variant!: ReplyVariant;

  @ApiProperty({ format: "date-time", description: "when the reply would be sent: `at` plus the delay" })
  sendAt!: string;
}

@Injectable()
export class ReplyPreviews {
  constructor(
    private readonly prisma: PrismaService,
    private readonly connections: ConnectionsAdminService,
  ) {}

  /**
   * `409 no_reply_channel` for a provider without one (Static Forms); `409 no_auto_response` when
   * the body gives none and the connection has none in force (its own, its client's or its tenant's); `404` for a
   * lead that is not this connection's. The variant is the one the hours give at `sendAt`, when the
   * worker renders the reply (after the delay).
   */
  async preview(scope: TenantScope, id: string, body: ReplyPreviewBody): Promise<ReplyPreview> {
    const row = await this.connections.find(this.prisma, scope, id);
    const provider = row.provider as Provider;
    if (!hasApi(provider)) {
      throw new AppError(409, "no_reply_channel", `${provider} has no reply channel: nothing is ever sent.`);
    }
    const effective = effectiveSettings(row.settings as ReplySettings, inheritedOf(row));
    if (body.autoResponse) {
      const given = { autoResponse: body.autoResponse };
      refuse(autoResponseErrors(body.autoResponse, "autoResponse"));
      refuse(delayErrors({ ...effective, autoResponse: body.autoResponse }, given, ""));
    }
    const autoResponse: AutoResponse | null = body.autoResponse ?? effective.autoResponse;
    if (!autoResponse) {
      throw new AppError(
        409,
        "no_auto_response",
        "The connection has no auto-response (neither its own nor its tenant's): give one in the body.",
      );
    }
    const lead = body.leadId === undefined ? SAMPLE_LEAD : await this.lead(row.tenantId, row.id, body.leadId);
    const at = body.at ?? new Date();
    const sendAt = new Date(at.getTime() + (autoResponse.delaySeconds ?? 0) * 1000);
    const values = mergeValues(lead, { displayName: row.displayName, provider });
    const reply = plannedReply(autoResponse, effective.businessHours, values, sendAt);
    return { text: reply.text, variant: reply.variant, sendAt: sendAt.toISOString() };
  }

  private async lead(tenantId: string, connectionId: string, id: string): Promise<LeadMergeFields> {
    const lead = await this.prisma.lead.findFirst({
      where: { tenantId, connectionId, id },
      select: { firstName: true, name: true, service: true },
    });
    if (!lead) throw notFound("lead");
    return lead;
  }
}
