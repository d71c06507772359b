// connection.reauthorization_required through an email channel, end to end: a Thumbtack connection
// made through the OAuth flow (a fake authorization server), a refresh the token endpoint answers
// invalid_grant, one email through a real SMTP server on loopback (smtp-server) naming the
// connection and carrying no secret, and a reconnect that resolves the alert (a second email).
import { TokenRefreshSweep } from "../../src/connections/token-refresh-sweep.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { FakeAuthorizationServer, OAUTH_CLIENTS, refusal } from "../support/oauth-server.js";
import { confirmationLink, useSmtpServer } from "../support/smtp.js";
import { waitFor } from "../support/wait.js";

const RETURN_ORIGIN = "https://app.agency.example";
const CLIENT_SECRET = OAUTH_CLIENTS.thumbtack.clientSecret;

describe("alerts: reauthorization required, by email", () => {
  const smtp = useSmtpServer();
  /** The alert mails (the channel's confirmation mail is not one). */
  const mails = () => smtp.mails.filter((mail) => mail.text.includes("Subject: [Leadgate]"));

  let issued = 0;
  /** Strict as the provider (test/support/oauth-server.ts); a code's grant is the number of its tokens. */
  const authorization = new FakeAuthorizationServer<number>();
  const auth = useFakeServer({ status: 404, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    if (url.pathname === "/thumbtack/authorize") return authorization.authorize("thumbtack", url, ++issued);
    if (url.pathname === "/thumbtack/token" && request.method === "POST") {
      const refused = authorization.checkClient("thumbtack", request);
      if (refused) return refused;
      const form = new URLSearchParams(request.body);
      // Every refresh is refused: the grant was revoked at the provider.
      if (form.get("grant_type") === "refresh_token") {
        return refusal("thumbtack", "invalid_grant", "the grant was revoked");
      }
      const redeemed = authorization.redeem("thumbtack", form);
      if ("refused" in redeemed) return redeemed.refused;
      return {
        status: 200,
        body: {
          access_token: `thumbtack-access-${redeemed.grant}`,
          token_type: "Bearer",
          expires_in: 3600,
          refresh_token: `thumbtack-refresh-${redeemed.grant}`,
          scope: "offline_access supply::messages",
        },
      };
    }
    return undefined;
  });
  const thumbtack = useFakeServer({ status: 200, body: { data: [] } });
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      THUMBTACK_OAUTH_CLIENT_ID: OAUTH_CLIENTS.thumbtack.clientId,
      THUMBTACK_OAUTH_CLIENT_SECRET: CLIENT_SECRET,
      THUMBTACK_OAUTH_AUTHORIZE_URL: `${auth.url}/thumbtack/authorize`,
      THUMBTACK_OAUTH_TOKEN_URL: `${auth.url}/thumbtack/token`,
      OAUTH_RETURN_URL_ORIGINS: RETURN_ORIGIN,
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: "Leadgate <alerts@leadgate.example>",
      DISPATCHER_INTERVAL_MS: "300",
      JOB_BACKOFF_BASE_MS: "50",
    }),
  });

  /** Follows the fake authorization server's redirect back to the callback: the callback's answer. */
  const consent = async (authorizeUrl: string) => {
    const redirected = await fetch(authorizeUrl, { redirect: "manual" });
    const back = new URL(redirected.headers.get("location")!);
    return fetch(`${app.url}${back.pathname}${back.search}`, { redirect: "manual" });
  };
  /**
   * Resolves once `count` notification jobs exist and all succeeded: nothing more will be sent for
   * them. (Not app.settled(): the connect also starts a provider registration, which this minimal
   * fake Thumbtack does not answer as the real one would, so it keeps retrying.)
   */
  const notificationsDone = (count: number) =>
    waitFor(
      async () =>
        (await app.sql.query<{ status: string }>("SELECT status FROM jobs WHERE operation = 'notification'"))
          .rows,
      (rows) => rows.length === count && rows.every((row) => row.status === "succeeded"),
    );
  const alertsOf = async (connectionId: string) =>
    (
      await app.sql.query<{ id: string; type: string; status: string }>(
        `SELECT id, type, status FROM alerts
         WHERE connection_id = $1 AND type = 'connection.reauthorization_required' ORDER BY first_seen_at`,
        [connectionId],
      )
    ).rows;

  it("a refresh answered invalid_grant opens the alert, one email names the connection and no secret; a reconnect resolves it", async () => {
    const tenant = await createTenant(app.url);
    const channel = await tenant.admin.post("/admin/notification-channels", {
      type: "email",
      address: "ops@agency.example",
      // This test's minimal fake Thumbtack refuses the webhook registration that follows a connect:
      // the registration.error alert it opens is not this channel's business.
      types: ["connection.reauthorization_required"],
    });
    expect([channel.status, channel.body.channel.address]).toEqual([201, "ops@agency.example"]);
    // The address confirms first: a pending email channel is sent no alert.
    const [confirmation] = await waitFor(
      () => Promise.resolve(smtp.to("ops@agency.example")),
      (sent) => sent.length === 1,
    );
    const link = confirmationLink(confirmation!);
    expect((await fetch(`${app.url}${link.pathname}${link.search}`, { method: "POST" })).status).toBe(200);

    const started = await tenant.admin.post("/admin/connections/oauth", {
      provider: "thumbtack",
      externalAccountId: "700000000000000003",
      displayName: "Roofing Pros Thumbtack",
      returnUrl: `${RETURN_ORIGIN}/done`,
    });
    expect(started.status).toBe(201);
    const connected = await consent(started.body.authorizeUrl as string);
    const connectionId = new URL(connected.headers.get("location")!).searchParams.get("connectionId")!;
    expect(connectionId).toMatch(/^[0-9a-f-]{36}$/);

    // The token is due: the sweep refreshes it, and the provider refuses the refresh token.
    await app.sql.query(
      "UPDATE connections SET token_expires_at = now() - interval '1 minute' WHERE id = $1",
      [connectionId],
    );
    await app.worker.get(TokenRefreshSweep).sweep();
    const [alert] = await alertsOf(connectionId);
    expect(alert).toMatchObject({ type: "connection.reauthorization_required", status: "open" });
    await waitFor(
      () => Promise.resolve(mails().length),
      (n) => n === 1,
    );
    await notificationsDone(1);
    expect(mails()).toHaveLength(1);
    const [mail] = mails();
    expect(mail!.to).toEqual(["ops@agency.example"]);
    expect(mail!.from).toBe("alerts@leadgate.example");
    expect(mail!.text).toContain("Subject: [Leadgate] Alert: connection.reauthorization_required");
    expect(mail!.text).toContain("Roofing Pros Thumbtack");
    expect(mail!.text).toContain(`/admin/alerts/${alert!.id}`);
    for (const secret of ["thumbtack-access-", "thumbtack-refresh-", CLIENT_SECRET]) {
      expect(mail!.text).not.toContain(secret);
    }
    const view = await tenant.admin.get(`/admin/alerts?type=connection.reauthorization_required`);
    expect(view.body.items.map((a: { id: string; connectionId: string }) => [a.id, a.connectionId])).toEqual([
      [alert!.id, connectionId],
    ]);

    const reconnect = await tenant.admin.post(`/admin/connections/${connectionId}/reconnect`, {});
    expect(reconnect.status).toBe(201);
    expect((await consent(reconnect.body.authorizeUrl as string)).status).toBe(200); // the result page
    expect(await alertsOf(connectionId)).toEqual([
      { id: alert!.id, type: "connection.reauthorization_required", status: "resolved" },
    ]);
    await waitFor(
      () => Promise.resolve(mails().length),
      (n) => n === 2,
    );
    await notificationsDone(2);
    expect(mails()).toHaveLength(2);
    expect(mails()[1]!.text).toContain("Subject: [Leadgate] Resolved: connection.reauthorization_required");
  });
});
