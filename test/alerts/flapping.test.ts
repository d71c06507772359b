// Flapping alerts and what channels are told (api.md "Alerts and notification
// channels"): a condition that returns within 10 minutes of resolving re-opens the same alert; a
// channel is told only a change from what it was last told about the alert, and at most one opening
// per alert group per 10 minutes; a re-opening inside that window is told when the window ends, if
// the alert is still open then (the re-opening sweep, run here at the "nows" the test chooses).
// And the text of leads, connections and errors reaches Slack escaped.
import { AlertBook, type AlertOccurrence } from "../../src/alerts/alert-book.js";
import { ReopeningSweep } from "../../src/alerts/notifications/reopening-sweep.js";
import { ConnectionStore } from "../../src/connections/connection-store.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const MINUTE = 60_000;

describe("alerts: flapping is damped per channel; Slack text is escaped", () => {
  const receiver = useFakeServer({ status: 204 });
  const slack = useFakeServer({ status: 200, text: "ok" });
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, DISPATCHER_INTERVAL_MS: "300" },
  });
  const book = () => app.api.app.get(AlertBook, { strict: false });
  /** The re-opening sweep at `minutes` from now (the window's end is 10 minutes after an opening was told). */
  const sweepIn = (minutes: number) =>
    app.worker.get(ReopeningSweep).run(new Date(Date.now() + minutes * MINUTE));
  /**
   * Waits until the channels of `name` were told `expected`, then for everything to settle, and
   * compares in any order: the notifications of one alert are separate jobs (an opening and the
   * resolution right after it may arrive either way round).
   */
  const toldExactly = async (name: string, expected: string[]) => {
    await waitFor(
      () => Promise.resolve(told(name)),
      ({ webhook, slack }) => webhook.length >= expected.length && slack.length >= expected.length,
    );
    await app.settled();
    const sorted = (list: string[]) => [...list].sort();
    const { webhook, slack } = told(name);
    expect({ webhook: sorted(webhook), slack: sorted(slack) }).toEqual({
      webhook: sorted(expected),
      slack: sorted(expected),
    });
  };
  /** A tenant with a webhook and a Slack channel of its own (paths named after `name`). */
  const tenantWithChannels = async (name: string) => {
    const tenant = await createTenant(app.url);
    for (const channel of [
      { type: "webhook", url: `${receiver.url}/${name}` },
      { type: "slack", url: `${slack.url}/services/${name}` },
    ]) {
      expect((await tenant.admin.post("/admin/notification-channels", channel)).status).toBe(201);
    }
    return tenant;
  };
  /** What each channel of `name` was told, in order: "opened" / "resolved". */
  const told = (name: string) => ({
    webhook: receiver.received
      .filter((request) => request.path === `/${name}`)
      .map((request) => (JSON.parse(request.body) as { type: string }).type.replace("alert.", "")),
    slack: slack.received
      .filter((request) => request.path === `/services/${name}`)
      .map((request) =>
        (JSON.parse(request.body) as { text: string }).text.includes("Resolved") ? "resolved" : "opened",
      ),
  });
  const occurrenceOf = (tenantId: string): AlertOccurrence => ({
    tenantId,
    type: "webhooks.missing",
    errorCode: "missed",
    summary: "Reconciliation found leads no webhook delivered.",
  });
  const alertsOf = async (tenantId: string) =>
    (
      await app.sql.query<{ id: string; status: string; count: number }>(
        "SELECT id, status, count FROM alerts WHERE tenant_id = $1 ORDER BY first_seen_at",
        [tenantId],
      )
    ).rows;

  it("opens and resolves 5 times within 2 minutes: one alert, re-opened; each channel told one opening and one resolution", async () => {
    const tenant = await tenantWithChannels("flap");
    const occurrence = occurrenceOf(tenant.tenantId);
    for (let round = 0; round < 5; round++) {
      await book().raise(undefined, occurrence);
      expect(await book().clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" })).toBe(1);
    }
    const alerts = await alertsOf(tenant.tenantId);
    expect(alerts.map((alert) => [alert.status, alert.count])).toEqual([["resolved", 5]]);
    await toldExactly("flap", ["opened", "resolved"]);
    // The re-openings inside the window were deferred to its end; the alert is resolved by then: nothing.
    expect(await sweepIn(11)).toBe(0);
    await toldExactly("flap", ["opened", "resolved"]);
  });

  it("a re-opening inside the window is told once when the window ends, if the alert is still open; then its resolution", async () => {
    const tenant = await tenantWithChannels("reopen");
    const occurrence = occurrenceOf(tenant.tenantId);
    const id = await book().raise(undefined, occurrence);
    await book().clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" });
    expect(await book().raise(undefined, occurrence)).toBe(id); // re-opened, inside the window
    await toldExactly("reopen", ["opened", "resolved"]);
    expect(await sweepIn(5)).toBe(0); // the window has not ended
    expect(await sweepIn(11)).toBe(2); // one per channel
    await toldExactly("reopen", ["opened", "resolved", "opened"]);
    expect(await sweepIn(12)).toBe(0); // told once
    const reopening = receiver.received.filter((request) => request.path === "/reopen")[2]!;
    expect(JSON.parse(reopening.body)).toMatchObject({ type: "alert.opened" });
    expect(reopening.headers["webhook-id"]).toMatch(
      new RegExp(`^notification:${id}\\.[0-9a-f-]{36}\\.opened\\.2$`),
    );
    // Its resolution is a change from what the channels were last told: told.
    await book().clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" });
    await toldExactly("reopen", ["opened", "resolved", "opened", "resolved"]);
  });

  it("a re-opening after the window (its last opening told 10 minutes ago or more) is told at once", async () => {
    const tenant = await tenantWithChannels("later");
    const occurrence = occurrenceOf(tenant.tenantId);
    const id = await book().raise(undefined, occurrence);
    await book().clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" });
    await toldExactly("later", ["opened", "resolved"]);
    // The opening was told 11 minutes ago, the resolution 9 minutes ago: the condition returns.
    await app.sql.query(
      "UPDATE alert_channel_states SET opened_at = now() - interval '11 minutes' WHERE alert_id = $1",
      [id],
    );
    await app.sql.query("UPDATE alerts SET resolved_at = now() - interval '9 minutes' WHERE id = $1", [id]);
    expect(await book().raise(undefined, occurrence)).toBe(id);
    await toldExactly("later", ["opened", "resolved", "opened"]);
    expect(await sweepIn(11)).toBe(0);
  });

  it("a condition that returns within 10 minutes of resolving re-opens the same alert; later, it opens a new one", async () => {
    const tenant = await createTenant(app.url);
    const occurrence = occurrenceOf(tenant.tenantId);
    const first = await book().raise(undefined, occurrence);
    await book().clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" });
    expect(await book().raise(undefined, occurrence)).toBe(first);
    const view = await tenant.admin.get(`/admin/alerts/${first}`);
    expect(view.body).toMatchObject({ status: "open", resolvedAt: null, count: 2 });
    await book().clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" });
    // Resolved 11 minutes ago: the condition's return is a new alert.
    await app.sql.query("UPDATE alerts SET resolved_at = now() - interval '11 minutes' WHERE id = $1", [
      first,
    ]);
    const second = await book().raise(undefined, occurrence);
    expect(second).not.toBe(first);
    expect((await alertsOf(tenant.tenantId)).map((alert) => [alert.id, alert.status])).toEqual([
      [first, "resolved"],
      [second, "open"],
    ]);
  });

  it("Slack receives a connection's display name escaped (&, <, >); Leadgate's own link still works", async () => {
    const tenant = await createTenant(app.url);
    const channel = await tenant.admin.post("/admin/notification-channels", {
      type: "slack",
      url: `${slack.url}/services/escaped`,
    });
    expect(channel.status).toBe(201);
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-escaped",
      displayName: "<!channel> <https://evil|click> & co",
      inboundAuth: { type: "bearer" },
    });
    expect(created.status).toBe(201);
    const connectionId = created.body.connection.id as string;
    await app.worker.get(ConnectionStore).refuseCredentials({ tenantId: tenant.tenantId, id: connectionId });
    const [message] = await waitFor(
      () => Promise.resolve(slack.received.filter((request) => request.path === "/services/escaped")),
      (requests) => requests.length === 1,
    );
    const { text } = JSON.parse(message!.body) as { text: string };
    expect(text).toContain("&lt;!channel&gt; &lt;https://evil|click&gt; &amp; co");
    expect(text).not.toContain("<!channel>");
    expect(text).not.toContain("<https://evil");
    const [alert] = await alertsOf(tenant.tenantId);
    expect(text).toMatch(new RegExp(`<http://[^|>]+/admin/alerts/${alert!.id}\\|Open the alert>`));
  });
});
