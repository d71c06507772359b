// First-run keys: an env file holding a fresh LEADGATE_ENCRYPTION_KEY and a bootstrap operator key,
// written once and kept. `npm start` (scripts/start.mjs) writes it to .env; `docker compose up`
// runs `node scripts/keys.mjs /keys/leadgate.env` once, into the leadgate-keys volume.
//
// The rule, the same for both: when LEADGATE_ENCRYPTION_KEY comes from the environment, nothing is
// written (the operator's own keys win); otherwise an existing file is kept as it is, never
// rewritten, and a missing one is created (mode 0600) and its operator key printed.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** An API key in Leadgate's own format, `lg_<12 hex>_<43 base64url>` (as src/auth/api-key.ts makes them). */
function generateOperatorKey() {
  return `lg_${randomBytes(6).toString("hex")}_${randomBytes(32).toString("base64url")}`;
}

/**
 * Creates the env file with new keys unless it exists. Answers the new operator key, or undefined
 * when the file was already there (then it is left untouched).
 */
export function createKeysFile(path) {
  const operatorKey = generateOperatorKey();
  const text = [
    "# Written by Leadgate on first run. Keep this file: the encryption key opens every stored secret,",
    "# and without it they cannot be read. Variables set in the environment take precedence.",
    `LEADGATE_ENCRYPTION_KEY=${randomBytes(32).toString("base64")}`,
    `LEADGATE_BOOTSTRAP_OPERATOR_KEY=${operatorKey}`,
    "",
  ].join("\n");
  mkdirSync(dirname(path), { recursive: true });
  try {
    // "wx": fails if the file exists, so a file that appeared meanwhile is never overwritten.
    writeFileSync(path, text, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if (error.code === "EEXIST") return undefined;
    throw error;
  }
  return operatorKey;
}

/** What to print when a keys file was created: the operator key (only here) and where both keys live. */
export function announceKeys(path, operatorKey, howToReadAgain) {
  console.log(
    [
      "",
      `leadgate: first run: wrote a new encryption key and bootstrap operator key to ${path} (mode 0600).`,
      "leadgate: keep that file; the encryption key opens every stored secret. Your operator API key:",
      "",
      `    ${operatorKey}`,
      "",
      `leadgate: use it as "Authorization: Bearer <key>" on /admin/*. ${howToReadAgain}`,
      "",
    ].join("\n"),
  );
}

// `node scripts/keys.mjs <file>`: the one-shot `keys` service of docker-compose.yml.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = resolve(process.argv[2] ?? "/keys/leadgate.env");
  if (existsSync(path)) {
    console.log(`leadgate: keeping the keys in ${path}`);
  } else if (process.env.LEADGATE_ENCRYPTION_KEY?.trim()) {
    console.log("leadgate: LEADGATE_ENCRYPTION_KEY is set in the environment; no keys file is written");
  } else {
    const operatorKey = createKeysFile(path);
    if (operatorKey === undefined) console.log(`leadgate: keeping the keys in ${path}`);
    else
      announceKeys(
        path,
        operatorKey,
        "It is shown once here; to read it again: docker compose run --rm keys cat " + path,
      );
  }
}
