// Values Leadgate hands out and must recognise when they come back, without a lookup: the value
// travels with a MAC of it (`<value>.<tag>`), so a made-up one is told apart by computation alone
// (the OAuth `state`: a forged one costs no database query). The MAC key of each purpose is derived
// from the encryption keys (HKDF-SHA256), current and previous, so a tag made before a key rotation
// still verifies while the previous key is configured.
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/** Bytes of HMAC-SHA256 kept: 128 bits, far beyond guessing. */
const TAG_BYTES = 16;

export class SignedValues {
  /** Per key, current first: the MAC keys by purpose. */
  private readonly keys: Buffer[];
  private readonly derived = new Map<string, Buffer[]>();

  constructor(key: Buffer, previousKeys: Buffer[] = []) {
    this.keys = [key, ...previousKeys];
  }

  /** `value` with its tag for `purpose`. The value must not contain "." (base64url does not). */
  sign(purpose: string, value: string): string {
    if (value.includes(".")) throw new Error("a signed value may not contain '.'");
    return `${value}.${tagOf(this.macKeys(purpose)[0]!, value)}`;
  }

  /** True when `signed` is a value this deployment signed for `purpose` (compared in constant time). */
  verify(purpose: string, signed: string): boolean {
    const dot = signed.lastIndexOf(".");
    if (dot <= 0) return false;
    const value = signed.slice(0, dot);
    const given = Buffer.from(signed.slice(dot + 1), "base64url");
    if (given.length !== TAG_BYTES) return false;
    return this.macKeys(purpose).some((key) =>
      timingSafeEqual(given, Buffer.from(tagOf(key, value), "base64url")),
    );
  }

  private macKeys(purpose: string): Buffer[] {
    let keys = this.derived.get(purpose);
    if (keys === undefined) {
      keys = this.keys.map((key) =>
        Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `leadgate signed value: ${purpose}`, 32)),
      );
      this.derived.set(purpose, keys);
    }
    return keys;
  }
}

function tagOf(key: Buffer, value: string): string {
  return createHmac("sha256", key)
    .update(value, "utf8")
    .digest()
    .subarray(0, TAG_BYTES)
    .toString("base64url");
}
