import { createHash } from "node:crypto";
import { newConfirmationToken, readConfirmationToken, sameHash } from "./channel-confirmation-token.js";

const CHANNEL = "6f1c2d3e-4a5b-4c6d-8e7f-0123456789ab";

describe("confirmation tokens", () => {
  it("name their channel, carry 256 random bits, and are stored as their sha256 only", () => {
    const { token, hash } = newConfirmationToken(CHANNEL);
    expect(token).toMatch(new RegExp(`^${CHANNEL}\\.[A-Za-z0-9_-]{43}$`));
    expect(hash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(newConfirmationToken(CHANNEL).token).not.toBe(token);
    expect(readConfirmationToken(token)).toEqual({ channelId: CHANNEL, hash });
  });

  it("anything but a well-formed token reads as none", () => {
    const { token } = newConfirmationToken(CHANNEL);
    for (const bad of [
      undefined,
      42,
      ["a"],
      "",
      "garbage",
      `${token}x`,
      token.slice(1),
      token.toUpperCase(),
    ]) {
      expect(readConfirmationToken(bad)).toBeUndefined();
    }
  });

  it("compares hashes: equal, different, and malformed", () => {
    const { hash } = newConfirmationToken(CHANNEL);
    const other = newConfirmationToken(CHANNEL).hash;
    expect(sameHash(hash, hash)).toBe(true);
    expect(sameHash(hash, other)).toBe(false);
    expect(sameHash(hash, "abc")).toBe(false);
  });
});
