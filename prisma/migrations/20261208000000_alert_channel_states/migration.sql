-- Flapping alerts (issue 28, M2, api.md "Alerts and notification channels"): a condition that
-- returns within 10 minutes of its alert's resolution re-opens the same alert (alerts.openings counts
-- its openings, and names each opening's notifications), and each channel's memory of what it was
-- last told about an alert (alert_channel_states), which damps what it is told: only a change, at
-- most one opening per alert group per 10 minutes, a re-opening inside that window when the window
-- ends (if the alert is still open then: the re-opening sweep).

-- AlterTable
ALTER TABLE "alerts" ADD COLUMN     "openings" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "alert_channel_states" (
    "alert_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "told" TEXT NOT NULL,
    "opened_at" TIMESTAMPTZ(3),
    "deferred_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_channel_states_pkey" PRIMARY KEY ("alert_id","channel_id")
);

-- CreateIndex
CREATE INDEX "alerts_tenant_id_group_key_resolved_at_idx" ON "alerts"("tenant_id", "group_key", "resolved_at" DESC);

-- AddForeignKey
ALTER TABLE "alert_channel_states" ADD CONSTRAINT "alert_channel_states_alert_id_fkey" FOREIGN KEY ("alert_id") REFERENCES "alerts"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- A deleted channel's memory goes with it. Hand-written: the NotificationChannel model stays as it is.
ALTER TABLE "alert_channel_states" ADD CONSTRAINT "alert_channel_states_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "notification_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Closed vocabulary.
ALTER TABLE "alert_channel_states" ADD CONSTRAINT "alert_channel_states_told_check" CHECK ("told" IN ('opened', 'resolved'));
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_openings_check" CHECK ("openings" >= 1);

-- The re-opening sweep: deferred re-openings that are due.
CREATE INDEX "alert_channel_states_deferred_until_idx" ON "alert_channel_states"("deferred_until") WHERE "deferred_until" IS NOT NULL;
