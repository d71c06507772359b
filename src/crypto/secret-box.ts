import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Where an envelope is stored. It is part of the AES-GCM additional data, so an envelope copied to
 * another row or column does not open there.
 */
export interface SecretPlace {
  table: string;
  column: string;
  rowId: string;
}

const TAG_BYTES = 16;

/** Opened envelopes kept at most (SecretBox.open): far more than the connections one process serves at once. */
const OPENED_LIMIT = 10_000;

/**
 * AES-256-GCM for secrets and provider credentials at rest. An envelope is
 * `v2.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts). The additional data names the version,
 * the key id and the envelope's place (table, column, row id); the key id beside the ciphertext lets
 * the key be rotated, since envelopes name the key that opens them. The tag must be 16 bytes.
 *
 * `v1` envelopes (before places were bound) are unbound: `open` refuses them, and only
 * `npm run secrets:reencrypt` (which `npm run db:migrate` runs while any is left) reads them, to
 * rewrite them as `v2`.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  /**
   * Values already opened, by envelope and place: an envelope changes when its secret does (a
   * rotation seals a new one), so a value is never served for an envelope a row no longer holds.
   * Every delivery and every job opens its connection's secrets; AES-GCM each time is a measurable
   * share of both. The values are frozen (callers share them). Bounded: emptied when it holds
   * OPENED_LIMIT.
   */
  private readonly opened = new Map<string, unknown>();
  readonly keyId: string;

  constructor(key: Buffer, previousKeys: Buffer[] = []) {
    this.keyId = SecretBox.idOf(key);
    for (const k of [key, ...previousKeys]) this.keys.set(SecretBox.idOf(k), k);
  }

  static idOf(key: Buffer): string {
    return createHash("sha256").update(key).digest("hex").slice(0, 8);
  }

  seal(value: unknown, place: SecretPlace): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.keyId)!, iv, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(additionalData("v2", this.keyId, place));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
    return ["v2", this.keyId, iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  }

  /** The value of a `v2` envelope stored at `place`; throws for any other place, version or a bad tag. */
  open<T>(envelope: string, place: SecretPlace): T {
    const key = `${place.table}:${place.column}:${place.rowId}:${envelope}`;
    if (this.opened.has(key)) return this.opened.get(key) as T;
    const value = deepFreeze(this.decrypt<T>(envelope, "v2", place));
    if (this.opened.size >= OPENED_LIMIT) this.opened.clear();
    this.opened.set(key, value);
    return value;
  }

  /** The same value sealed under the current key and bound to `place` (reads `v1` envelopes too). */
  reseal(envelope: string, place: SecretPlace): string {
    const version = envelope.split(".")[0];
    const value = version === "v1" ? this.decrypt(envelope, "v1") : this.open(envelope, place);
    return this.seal(value, place);
  }

  /** Whether `secrets:reencrypt` has to rewrite an envelope: unbound, or sealed under another key. */
  isStale(envelope: string): boolean {
    const [version, keyId] = envelope.split(".");
    return version !== "v2" || keyId !== this.keyId;
  }

  private decrypt<T>(envelope: string, expected: "v1" | "v2", place?: SecretPlace): T {
    const [version, keyId, iv, tag, ciphertext, extra] = envelope.split(".");
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    const tagBytes = tag === undefined ? undefined : Buffer.from(tag, "base64url");
    if (
      version !== expected ||
      !key ||
      iv === undefined ||
      tagBytes?.length !== TAG_BYTES ||
      ciphertext === undefined ||
      extra !== undefined
    ) {
      throw new Error(
        `cannot open secret envelope (version ${version ?? "?"}, key id ${keyId ?? "?"}: unknown, unbound or malformed)`,
      );
    }
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(place ? additionalData("v2", keyId!, place) : Buffer.from(keyId!));
    decipher.setAuthTag(tagBytes);
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]);
    return JSON.parse(plain.toString("utf8")) as T;
  }
}

/** `value` (parsed JSON), made read-only all the way down. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

function additionalData(version: "v2", keyId: string, place: SecretPlace): Buffer {
  return Buffer.from(JSON.stringify([version, keyId, place.table, place.column, place.rowId]));
}
