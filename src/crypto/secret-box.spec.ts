import { createCipheriv, randomBytes } from "node:crypto";
import { SecretBox, type SecretPlace } from "./secret-box.js";

const key = Buffer.alloc(32, 1);
const place: SecretPlace = { table: "connections", column: "credentials", rowId: "row-1" };

describe("SecretBox", () => {
  const box = new SecretBox(key);

  it("opens what it sealed, at the same place", () => {
    expect(box.open(box.seal({ accessToken: "t" }, place), place)).toEqual({ accessToken: "t" });
  });

  it("an envelope does not open at another table, column or row", () => {
    const envelope = box.seal("s", place);
    for (const elsewhere of [
      { ...place, table: "notification_channels" },
      { ...place, column: "crm_signing_secret" },
      { ...place, rowId: "row-2" },
    ]) {
      expect(() => box.open(envelope, elsewhere)).toThrow();
    }
  });

  it("opens an envelope once: the same value again, read-only; another place still refuses it", () => {
    const envelope = box.seal({ accessToken: "t", scopes: ["a"] }, place);
    const opened = box.open<{ accessToken: string; scopes: string[] }>(envelope, place);
    expect(box.open(envelope, place)).toBe(opened);
    expect(() => {
      opened.accessToken = "changed";
    }).toThrow(TypeError);
    expect(() => opened.scopes.push("b")).toThrow(TypeError);
    expect(() => box.open(envelope, { ...place, rowId: "row-2" })).toThrow(
      /cannot open|unable to authenticate/i,
    );
  });

  it("a new envelope at the same place opens its own value (a rotated secret)", () => {
    expect(box.open(box.seal({ accessToken: "old" }, place), place)).toEqual({ accessToken: "old" });
    expect(box.open(box.seal({ accessToken: "new" }, place), place)).toEqual({ accessToken: "new" });
  });

  it("refuses a truncated or extended tag", () => {
    const parts = box.seal("s", place).split(".");
    const tag = Buffer.from(parts[3]!, "base64url");
    for (const changed of [tag.subarray(0, 12), tag.subarray(0, 4), Buffer.concat([tag, Buffer.alloc(1)])]) {
      const envelope = [...parts.slice(0, 3), changed.toString("base64url"), parts[4]].join(".");
      expect(() => box.open(envelope, place)).toThrow(/cannot open/);
    }
  });

  it("open refuses an unbound v1 envelope; reseal binds it to its place", () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from(box.keyId));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify("s")), cipher.final()]);
    const v1 = ["v1", box.keyId, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
    expect(() => box.open(v1, place)).toThrow(/cannot open/);
    expect(box.isStale(v1)).toBe(true);
    const bound = box.reseal(v1, place);
    expect(bound.startsWith(`v2.${box.keyId}.`)).toBe(true);
    expect(box.isStale(bound)).toBe(false);
    expect(box.open(bound, place)).toBe("s");
  });

  it("an envelope of a previous key opens while that key is listed, and is stale", () => {
    const rotated = new SecretBox(Buffer.alloc(32, 2), [key]);
    const old = box.seal("s", place);
    expect(rotated.open(old, place)).toBe("s");
    expect(rotated.isStale(old)).toBe(true);
    expect(rotated.isStale(rotated.reseal(old, place))).toBe(false);
  });
});
