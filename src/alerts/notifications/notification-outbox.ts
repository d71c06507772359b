// The notifications of alerts that open, re-open or resolve: one `notification` job per channel that
// receives the alert (the tenant's channels and the platform's, tenant_id null, whose `types`
// include the alert's type or are null) and is to be told (its memory, channel-memory.ts: only a
// change, at most one opening per 10 minutes), keyed `notification:<alert>.<channel>.<transition>`
// (with the opening's number after the first: notification-key.ts). Created in the transaction that
// opens or resolves the alert, through the job outbox: they are dispatched as soon as it commits,
// with OPERATION_SETTINGS.notification's attempts, and never exist when it rolls back. A
// re-opening deferred to its window's end is told then by the re-opening sweep (tellDeferred).
import { Injectable } from "@nestjs/common";
import { PrismaService } from "../../database/prisma.service.js";
import type { Tx } from "../../database/transactions.js";
import { JobOutbox } from "../../jobs/job-outbox.js";
import type { AlertRow } from "../alert-statements.js";
import { decide, endDeferrals, type Telling } from "./channel-memory.js";
import { type AlertTransition, notificationKey } from "./notification-key.js";

@Injectable()
export class NotificationOutbox {
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: JobOutbox,
  ) {}

  /**
   * Creates, in `tx` (which opened, re-opened or resolved `alerts` and holds their rows), the
   * notifications of their `transition` that their channels are to be told now; answers how many.
   */
  async add(tx: Tx, alerts: readonly AlertRow[], transition: AlertTransition): Promise<number> {
    if (alerts.length === 0) return 0;
    return this.create(tx, await decide(tx, alerts, transition), transition);
  }

  /**
   * The re-openings deferred to a window that has ended by `now`, of at most `limit` alerts: told to
   * their channels if the alert is still open, else dropped. Answers how many alerts it took and how
   * many notifications it created.
   */
  tellDeferred(now: Date, limit: number): Promise<{ alerts: number; told: number }> {
    return this.prisma.$transaction(async (tx) => {
      const { alerts, tellings } = await endDeferrals(tx, now, limit);
      return { alerts, told: await this.create(tx, tellings, "opened") };
    });
  }

  private async create(tx: Tx, tellings: readonly Telling[], transition: AlertTransition): Promise<number> {
    const created = await this.outbox.add(
      tx,
      tellings.map((telling) => ({
        tenantId: telling.tenantId,
        connectionId: null,
        alertId: telling.alertId,
        operation: "notification" as const,
        jobKey: notificationKey(telling.alertId, telling.channelId, transition, telling.openings),
      })),
    );
    return created.length;
  }
}
