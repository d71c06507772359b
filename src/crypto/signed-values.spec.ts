import { randomBytes } from "node:crypto";
import { SignedValues } from "./signed-values.js";

describe("SignedValues", () => {
  const key = randomBytes(32);
  const values = new SignedValues(key);

  it("verifies what it signed, for the same purpose only", () => {
    const signed = values.sign("oauth-state", "abc_DEF-123");
    expect(signed.startsWith("abc_DEF-123.")).toBe(true);
    expect(values.verify("oauth-state", signed)).toBe(true);
    expect(values.verify("other-purpose", signed)).toBe(false);
  });

  it("refuses made-up, altered and untagged values", () => {
    const signed = values.sign("oauth-state", "abc");
    const tag = signed.split(".")[1]!;
    for (const forged of [
      "abc",
      "",
      ".",
      `abd.${tag}`,
      `abc.${tag.slice(0, -1)}`,
      `abc.${tag}A`,
      `abc.${Buffer.alloc(16).toString("base64url")}`,
      `.${tag}`,
    ]) {
      expect([forged, values.verify("oauth-state", forged)]).toEqual([forged, false]);
    }
  });

  it("a value signed under a key being rotated out still verifies while that key is configured", () => {
    const signed = values.sign("oauth-state", "abc");
    expect(new SignedValues(randomBytes(32), [key]).verify("oauth-state", signed)).toBe(true);
    expect(new SignedValues(randomBytes(32)).verify("oauth-state", signed)).toBe(false);
  });
});
