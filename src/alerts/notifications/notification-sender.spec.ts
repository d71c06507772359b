import { originOf } from "../../common/outbound/circuit-breaker.js";
import type { DestinationGuard } from "../../common/outbound/destination-guard.js";
import type { JobsConfig } from "../../config/sections.js";
import type { ChannelTarget } from "../notification-channels.repository.js";
import { NotificationSender } from "./notification-sender.js";

const channel = (fields: Partial<ChannelTarget>): ChannelTarget => ({
  id: "00000000-0000-0000-0000-000000000001",
  tenantId: null,
  type: "webhook",
  url: null,
  address: null,
  types: null,
  status: "active",
  createdAt: new Date(),
  ...fields,
});

const sender = (smtpUrl?: string) =>
  new NotificationSender(
    {} as DestinationGuard,
    {
      smtpUrl,
      alertEmailFrom: smtpUrl ? "alerts@leadgate.example" : undefined,
      maxChannelsPerTenant: 20,
      unansweredSweepSeconds: 60,
    },
    { sideEffectTimeoutMs: 1_000 } as JobsConfig,
  );

describe("NotificationSender.destination (what destination fairness counts a channel's calls by)", () => {
  it("is the webhook or Slack URL, whose origin is the destination", () => {
    const webhook = channel({ type: "webhook", sendUrl: "https://hooks.agency.example:8443/alerts?k=1" });
    const slack = channel({ type: "slack", sendUrl: "https://hooks.slack.com/services/T1/B1/secret" });
    expect(originOf(sender().destination(webhook))).toBe("https://hooks.agency.example:8443");
    expect(originOf(sender().destination(slack))).toBe("https://hooks.slack.com");
  });

  it("is the SMTP server for every email channel (one destination), never its credentials", () => {
    const smtp = sender("smtps://alerts:p4ssw0rd@mail.example:465");
    const first = smtp.destination(channel({ type: "email", address: "ops@agency-a.example" }));
    const second = smtp.destination(channel({ type: "email", address: "ops@agency-b.example" }));
    expect(first).toBe("smtps://mail.example:465");
    expect(second).toBe(first);
    expect(originOf(first)).toBe("smtps://mail.example:465");
    expect(originOf("smtp://mail.example")).not.toBe(originOf("smtp://other.example"));
  });

  it("refuses a channel that cannot be sent to (permanent)", () => {
    expect(() => sender().destination(channel({ type: "slack" }))).toThrow("channel_incomplete");
    expect(() => sender().destination(channel({ type: "email", address: "ops@agency.example" }))).toThrow(
      "smtp_not_configured",
    );
  });
});
