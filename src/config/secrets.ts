// The secret variables: the encryption keys and the tokens. Besides their shape, a value copied from
// an example instead of generated (`change-me`, `<placeholder>`, `xxxxxxxx…`) stops the boot: it
// would pass every length check and still be known to anyone who read the same example.
import { ConfigError, type Env, read, required } from "./env.js";

const KEY_HINT = "32 random bytes in base64, e.g. `openssl rand -base64 32`";

/** Words that mark a value as a stand-in, matched ignoring case, digits kept, everything else dropped. */
const PLACEHOLDER_WORDS = ["changeme", "changethis", "replaceme", "placeholder"];

function holdsPlaceholderWord(text: string): boolean {
  const letters = text.toLowerCase().replace(/[^a-z0-9]/g, "");
  return PLACEHOLDER_WORDS.some((word) => letters.includes(word));
}

/** A stand-in for a secret: it holds a placeholder word, or is one character repeated. */
function isPlaceholder(text: string): boolean {
  return holdsPlaceholderWord(text) || /^(.)\1*$/s.test(text);
}

function placeholderError(name: string, hint: string): ConfigError {
  return new ConfigError(name, `is a placeholder, not a secret: set a generated value (${hint})`);
}

function decodeKey(name: string, value: string, production: boolean): Buffer {
  const key = Buffer.from(value, "base64");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || key.length !== 32) {
    throw new ConfigError(name, "must be exactly 32 bytes encoded in base64 (`openssl rand -base64 32`)");
  }
  // Also the bytes as text: `echo -n change-me-… | base64` makes a key of the right shape.
  if (isPlaceholder(value) || holdsPlaceholderWord(key.toString("latin1"))) {
    throw placeholderError(name, KEY_HINT);
  }
  // A key of one repeated byte (all zeros: `Buffer.alloc(32)`) is no secret. Outside production a
  // test or a bench may use one; a production process refuses it.
  if (production && key.every((byte) => byte === key[0])) {
    throw new ConfigError(name, `is one byte repeated, not a secret: set a generated key (${KEY_HINT})`);
  }
  return key;
}

const isProduction = (env: Env) => read(env, "NODE_ENV") === "production";

export function encryptionKey(env: Env): Buffer {
  return decodeKey(
    "LEADGATE_ENCRYPTION_KEY",
    required(env, "LEADGATE_ENCRYPTION_KEY", KEY_HINT),
    isProduction(env),
  );
}

export function previousEncryptionKeys(env: Env): Buffer[] {
  const name = "LEADGATE_PREVIOUS_ENCRYPTION_KEYS";
  const value = read(env, name);
  return value === undefined
    ? []
    : value.split(",").map((key) => decodeKey(name, key.trim(), isProduction(env)));
}

/** An optional token of at least `minLength` characters (LEADGATE_BOOTSTRAP_OPERATOR_KEY, METRICS_TOKEN, ...). */
export function secret(env: Env, name: string, minLength: number): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  if (isPlaceholder(value)) throw placeholderError(name, "e.g. `openssl rand -base64 32`");
  if (value.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
  return value;
}
