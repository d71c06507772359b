// Console passwords: argon2id (OWASP's second configuration: 19 MiB, 2 passes). A sign-in with an
// unknown e-mail verifies against a dummy hash of the same parameters, so it costs as long as a wrong
// password.
import { hash, verify } from "@node-rs/argon2";
import { AppError } from "../common/app-error.js";

const OPTIONS = {
  algorithm: 2 /* Algorithm.Argon2id (an ambient const enum) */,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
};

export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/**
 * The hash an unknown e-mail is verified against: of a random password thrown away once hashed, with
 * OPTIONS (a verify costs what the hash's own parameters say). Nothing matches it (passwordMatches
 * answers false without a stored hash whatever the password), and a constant costs the process no
 * 19 MiB hash at boot (it was the API's peak memory: 148-160 MiB against 137 after).
 */
export const DUMMY_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$sVnvfR+Ce17WeLM7PJ3JgQ$q/xH2GIA8RD06RS9VNbyRc+lGr4y/sIXeDs/Gh2yqNc";

/** Verifies `password` against `stored`, or against a dummy hash when there is none (same cost). */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  const against = stored ?? DUMMY_HASH;
  const ok = await verify(against, password).catch(() => false);
  return stored !== null && ok;
}

/**
 * `400 validation_failed` unless `password` may be chosen by the user of `email`; the details name
 * the body's `field`.
 */
export function checkNewPassword(password: unknown, email: string, field = "password"): string {
  const problem =
    typeof password !== "string"
      ? "must be a string"
      : [...password].length < MIN_PASSWORD_LENGTH
        ? `must be at least ${MIN_PASSWORD_LENGTH} characters`
        : password.length > MAX_PASSWORD_LENGTH
          ? `must be at most ${MAX_PASSWORD_LENGTH} characters`
          : password.trim().toLowerCase() === email.toLowerCase()
            ? "must not be the e-mail address"
            : undefined;
  if (problem !== undefined) {
    throw new AppError(400, "validation_failed", `Invalid input: ${field}.`, { [field]: [problem] });
  }
  return password as string;
}
