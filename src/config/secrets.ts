// The secret variables: the encryption keys and the tokens.
import { ConfigError, type Env, read, required } from "./env.js";

const KEY_HINT = "32 random bytes in base64, e.g. `openssl rand -base64 32`";

function decodeKey(name: string, value: string): Buffer {
  const key = Buffer.from(value, "base64");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || key.length !== 32) {
    throw new ConfigError(name, "must be exactly 32 bytes encoded in base64 (`openssl rand -base64 32`)");
  }
  return key;
}

export function encryptionKey(env: Env): Buffer {
  return decodeKey("LEADGATE_ENCRYPTION_KEY", required(env, "LEADGATE_ENCRYPTION_KEY", KEY_HINT));
}

export function previousEncryptionKeys(env: Env): Buffer[] {
  const name = "LEADGATE_PREVIOUS_ENCRYPTION_KEYS";
  const value = read(env, name);
  return value === undefined ? [] : value.split(",").map((key) => decodeKey(name, key.trim()));
}

/** An optional token of at least `minLength` characters (LEADGATE_BOOTSTRAP_OPERATOR_KEY, METRICS_TOKEN, ...). */
export function secret(env: Env, name: string, minLength: number): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  if (value.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`);
  return value;
}
