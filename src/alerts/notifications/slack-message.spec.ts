import type { AlertView } from "../alert-types.js";
import { slackEscape, slackText } from "./slack-message.js";

const alert: AlertView = {
  id: "00000000-0000-0000-0000-00000000000a",
  tenantId: "00000000-0000-0000-0000-00000000000b",
  type: "connection.credential_error",
  status: "open",
  connectionId: "00000000-0000-0000-0000-00000000000c",
  operation: "crm-delivery",
  errorCode: "http_<b>",
  count: 1,
  firstSeenAt: new Date("2026-12-01T10:00:00Z"),
  lastSeenAt: new Date("2026-12-01T10:00:00Z"),
  acknowledgedAt: null,
  resolvedAt: null,
  summary: 'Connection "<!here> & <https://evil.example|login>" refused its credentials.',
};

describe("Slack text", () => {
  it("escapes &, < and > (only those, & first)", () => {
    expect(slackEscape("<!channel> <https://evil|click> & co &amp;")).toBe(
      "&lt;!channel&gt; &lt;https://evil|click&gt; &amp; co &amp;amp;",
    );
  });

  it("escapes the summary, the connection's name and the error code; Leadgate's own link stays markup", () => {
    const text = slackText({
      transition: "opened",
      alert,
      connectionName: "<!channel> <https://evil|click> & co",
      link: "https://leadgate.example/admin/alerts/00000000-0000-0000-0000-00000000000a",
    });
    expect(text.split("\n").slice(0, -1).join("\n")).not.toMatch(/[<>]/);
    expect(text).toContain('Connection "&lt;!here&gt; &amp; &lt;https://evil.example|login&gt;" refused');
    expect(text).toContain("Connection: &lt;!channel&gt; &lt;https://evil|click&gt; &amp; co (");
    expect(text).toContain("Error: http_&lt;b&gt;");
    expect(text.split("\n").at(-1)).toBe(
      "<https://leadgate.example/admin/alerts/00000000-0000-0000-0000-00000000000a|Open the alert>",
    );
  });
});
