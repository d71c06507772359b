// The notifications of alerts that open or resolve: one `notification` job per channel that
// receives the alert (the tenant's channels and the platform's, tenant_id null, whose `types`
// include the alert's type or are null), keyed `notification:<alert>.<channel>.<transition>`
// (notification-key.ts). Created in the transaction that opens or resolves the alert, through the
// job outbox: they are dispatched as soon as it commits, with OPERATION_SETTINGS.notification's
// attempts, and never exist when it rolls back.
import { Injectable } from "@nestjs/common";
import type { Tx } from "../../database/transactions.js";
import { JobOutbox } from "../../jobs/job-outbox.js";
import type { AlertRow } from "../alert-statements.js";
import { type AlertTransition, notificationKey } from "./notification-key.js";

@Injectable()
export class NotificationOutbox {
  constructor(private readonly outbox: JobOutbox) {}

  /** Creates the notifications of `alerts`' `transition` in `tx`; answers how many. */
  async add(tx: Tx, alerts: readonly AlertRow[], transition: AlertTransition): Promise<number> {
    if (alerts.length === 0) return 0;
    const targets = await tx.$queryRawUnsafe<{ alertId: string; tenantId: string; channelId: string }[]>(
      `SELECT a.id AS "alertId", a.tenant_id AS "tenantId", ch.id AS "channelId"
       FROM jsonb_to_recordset($1::jsonb) AS a(id uuid, tenant_id uuid, type text)
       JOIN notification_channels ch
         ON (ch.tenant_id = a.tenant_id OR ch.tenant_id IS NULL) AND (ch.types IS NULL OR a.type = ANY (ch.types))`,
      JSON.stringify(alerts.map((alert) => ({ id: alert.id, tenant_id: alert.tenantId, type: alert.type }))),
    );
    const created = await this.outbox.add(
      tx,
      targets.map((target) => ({
        tenantId: target.tenantId,
        connectionId: null,
        alertId: target.alertId,
        operation: "notification" as const,
        jobKey: notificationKey(target.alertId, target.channelId, transition),
      })),
    );
    return created.length;
  }
}
