import { Webhook } from "standardwebhooks";
import { webhookSignature } from "./webhook-signature.js";

describe("webhookSignature", () => {
  const secret = `whsec_${Buffer.from("a signing key of 32 bytes, say!!").toString("base64")}`;
  const sentAt = new Date("2026-12-01T12:34:56.789Z");

  it.each([
    ["an ASCII body", '{"type":"lead.created"}'],
    ["a body with non-ASCII text", '{"name":"Zoë Ångström – 東京"}'],
    ["an empty body", ""],
  ])("signs %s as standardwebhooks does", (_name, body) => {
    expect(webhookSignature(secret, "crm-delivery:abc", sentAt, body)).toBe(
      new Webhook(secret).sign("crm-delivery:abc", sentAt, body),
    );
  });

  it("takes a secret without its whsec_ prefix as the library does", () => {
    const bare = secret.slice("whsec_".length);
    expect(webhookSignature(bare, "id", sentAt, "{}")).toBe(new Webhook(secret).sign("id", sentAt, "{}"));
  });

  it("is verified by the library", () => {
    const now = new Date();
    const body = '{"ok":true}';
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": webhookSignature(secret, "msg_1", now, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual({ ok: true });
  });

  it("refuses an empty key", () => {
    expect(() => webhookSignature("whsec_", "id", sentAt, "{}")).toThrow("Secret can't be empty.");
  });
});
