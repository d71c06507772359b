// The provider side of a fault scenario on its own processes: a fake Thumbtack API that keeps each
// negotiation's messages (so a reply's outcome can be looked up), a fake CRM, and a tenant with a
// Thumbtack connection whose negotiations exercise every side effect (lead upsert, auto-reply, CRM
// delivery). The same setup as faults.test.ts's `scenario`, for scenarios kept in their own file.
import { randomBytes } from "node:crypto";
import { startFakeServer, type FakeServer } from "../../test/support/fake-server.js";
import { fixture } from "../../test/support/fixtures.js";
import { OPERATOR_KEY } from "./cluster.js";
import type { Delivery } from "./load.js";

export const REPLY = "Thanks! We will call you within the hour.";

/** A fake Thumbtack API: POST .../negotiations/{id}/messages is kept, GET lists what was kept. */
export function fakeThumbtack(): Promise<FakeServer> {
  const conversations = new Map<string, { from: string; text: string }[]>();
  return startFakeServer({ status: 201, body: {} }, (request) => {
    const id = /negotiations\/([^/]+)\/messages/.exec(request.path)?.[1];
    if (!id) return undefined;
    const messages = conversations.get(id) ?? [];
    if (request.method === "GET") return { status: 200, body: { messages } };
    messages.push({ from: "Business", text: (JSON.parse(request.body) as { text: string }).text });
    conversations.set(id, messages);
    return { status: 201, body: { messageID: randomBytes(4).toString("hex") } };
  });
}

/** A tenant with a Thumbtack connection (auto-reply on, CRM at `crmUrl`), and `events` deliveries to it. */
export async function thumbtackDeliveries(
  apiUrl: string,
  crmUrl: string,
  events: number,
): Promise<Delivery[]> {
  const admin = async (path: string, body: unknown, key = OPERATOR_KEY) => {
    const response = await fetch(`${apiUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (response.status !== 201)
      throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const tenant = await admin("/admin/tenants", { name: "Faults Agency" });
  const created = await admin(
    "/admin/connections",
    {
      provider: "thumbtack",
      externalAccountId: `70000000${randomBytes(4).readUInt32BE().toString().padStart(10, "0")}`, // a businessID: digits
      displayName: "Thumbtack",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "tt-token" },
      settings: { autoResponse: { enabled: true, text: REPLY }, crmDestination: { url: `${crmUrl}/crm` } },
    },
    tenant.apiKey.key as string,
  );
  const { username, password } = created.secrets as { username: string; password: string };
  const template = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
  const run = randomBytes(3).toString("hex");
  return Array.from({ length: events }, (_, n) => {
    const eventId = `neg-${run}-${n}`;
    return {
      eventId,
      path: `/webhooks/thumbtack/${created.connection.id as string}`,
      body: JSON.stringify({ ...template, data: { ...template.data, negotiationID: eventId } }),
      headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
    };
  });
}
