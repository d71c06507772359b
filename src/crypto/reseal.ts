import type { Logger } from "@nestjs/common";
import type { SecretBox, SecretPlace } from "./secret-box.js";

/**
 * `secrets:reencrypt`'s step for one stale envelope: sealed again under the current key, or
 * undefined when it does not open (its key is not configured, or it is not where it was sealed),
 * with a warning naming its place (`where`: ids and column, never a secret).
 */
export function resealOrWarn(
  box: SecretBox,
  envelope: string,
  place: SecretPlace,
  logger: Pick<Logger, "warn">,
  where: Record<string, string>,
): string | undefined {
  try {
    return box.reseal(envelope, place);
  } catch (error) {
    logger.warn({ msg: "cannot open a stored secret", ...where, error: String(error) });
    return undefined;
  }
}
