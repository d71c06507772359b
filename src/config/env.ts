// The primitives every variable is parsed with: a value is read trimmed (empty counts as unset), and
// a bad one throws a ConfigError whose message is one line naming the variable.
import { type IpRange, parseIpRange } from "./ip-ranges.js";

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
  }
}

export type Env = Record<string, string | undefined>;
export function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === "" ? undefined : value;
}

export function required(env: Env, name: string, hint: string): string {
  const value = read(env, name);
  if (value === undefined) throw new ConfigError(name, `is required (${hint})`);
  return value;
}

export function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string {
  const value =
    fallback === undefined ? required(env, name, `a ${protocols[0]}// URL`) : (read(env, name) ?? fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, `is not a valid URL (expected ${protocols.join(" or ")}//...)`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(" or ")} (got ${parsed.protocol})`);
  }
  return value.replace(/\/+$/, "");
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${value}")`);
  }
  return Number(value);
}

export function flag(env: Env, name: string, fallback = false): boolean {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (value !== "true" && value !== "false") {
    throw new ConfigError(name, `must be true or false (got "${value}")`);
  }
  return value === "true";
}

export function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = read(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${values.join(", ")} (got "${value}")`);
  }
  return value as T;
}

/** A provider path template: starts with "/", holds each of `params` as `{name}`. */
export function pathTemplate(env: Env, name: string, fallback: string, params: string[]): string {
  const value = read(env, name) ?? fallback;
  const missing = params.filter((param) => !value.includes(`{${param}}`));
  if (!/^\/[A-Za-z0-9/{}_.-]*$/.test(value) || missing.length > 0) {
    throw new ConfigError(
      name,
      `must be a path such as ${fallback}${missing.length ? ` (missing ${missing.map((p) => `{${p}}`).join(", ")})` : ""}`,
    );
  }
  return value;
}

/** A comma-separated list of IP addresses or CIDRs (empty: none). */
export function ipRanges(env: Env, name: string): IpRange[] {
  const value = read(env, name);
  if (value === undefined) return [];
  return value.split(",").map((entry) => {
    const range = parseIpRange(entry.trim());
    if (range === undefined) {
      throw new ConfigError(
        name,
        `must be a comma-separated list of IP addresses or CIDRs (got "${entry.trim()}")`,
      );
    }
    return range;
  });
}
