import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * AES-256-GCM for secrets and provider credentials at rest. An envelope is
 * `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts): the key id beside the ciphertext lets
 * the key be rotated, since envelopes name the key that opens them.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  readonly keyId: string;

  constructor(key: Buffer, previousKeys: Buffer[] = []) {
    this.keyId = SecretBox.idOf(key);
    for (const k of [key, ...previousKeys]) this.keys.set(SecretBox.idOf(k), k);
  }

  static idOf(key: Buffer): string {
    return createHash("sha256").update(key).digest("hex").slice(0, 8);
  }

  seal(value: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.currentKey(), iv);
    cipher.setAAD(Buffer.from(this.keyId));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
    return ["v1", this.keyId, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  }

  open<T>(envelope: string): T {
    const [version, keyId, iv, tag, ciphertext] = envelope.split(".");
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (version !== "v1" || !key || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error(`cannot open secret envelope (key id ${keyId ?? "?"} unknown or envelope malformed)`);
    }
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(keyId!));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]);
    return JSON.parse(plain.toString("utf8")) as T;
  }

  /** Whether an envelope was sealed under another key than the current one (a key rotation re-seals it). */
  isStale(envelope: string): boolean {
    return envelope.split(".")[1] !== this.keyId;
  }

  /** The same value sealed under the current key. */
  reseal(envelope: string): string {
    return this.seal(this.open<unknown>(envelope));
  }

  private currentKey(): Buffer {
    return this.keys.get(this.keyId)!;
  }
}
