// First-run keys, written once into an env file and kept.
//
// `docker compose up` runs the one-shot `keys` service: `node scripts/keys.mjs ensure /keys/leadgate.env`
// writes each of COMPOSE_KEYS that the environment leaves unset and the file does not hold yet into
// that file in the leadgate-keys volume (mode 0600), and prints their names, never their values:
// a container's output is kept (`docker compose logs keys`, the logging driver) for anyone with
// access to the Docker host. `docker compose run --rm keys show` prints them when someone asks.
// A line already in the file is never rewritten, an empty one included (that is how a key is
// switched off: `LEADGATE_BOOTSTRAP_OPERATOR_KEY=`); a key added by a later version (METRICS_TOKEN)
// is appended to an older file.
//
// `npm start` (scripts/start.mjs) calls createKeysFile for .env instead, and prints the operator key
// once, when it creates the file: that output goes to the terminal of the developer who started it,
// who can read .env anyway.
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Each key and how a fresh one is made. */
const GENERATORS = {
  LEADGATE_ENCRYPTION_KEY: () => randomBytes(32).toString("base64"),
  // An API key in Leadgate's own format, `lg_<12 hex>_<43 base64url>` (as src/auth/api-key.ts makes them).
  LEADGATE_BOOTSTRAP_OPERATOR_KEY: () =>
    `lg_${randomBytes(6).toString("hex")}_${randomBytes(32).toString("base64url")}`,
  METRICS_TOKEN: () => randomBytes(32).toString("base64url"),
};

/** What `npm start` writes to .env: its API on localhost serves /metrics without a token. */
export const LOCAL_KEYS = ["LEADGATE_ENCRYPTION_KEY", "LEADGATE_BOOTSTRAP_OPERATOR_KEY"];
/** What compose keeps in its volume: the API behind Caddy wants a token on /metrics. */
export const COMPOSE_KEYS = [...LOCAL_KEYS, "METRICS_TOKEN"];

const HEADER = [
  "# Written by Leadgate on first run. Keep this file: the encryption key opens every stored secret,",
  "# and without it they cannot be read. Variables set in the environment take precedence.",
];

const lineOf = (name, value) => `${name}=${value}\n`;

/** The names the env file at `path` has a line for (empty values included); empty when it does not exist. */
function namesIn(path) {
  if (!existsSync(path)) return new Set();
  const lines = readFileSync(path, "utf8").split("\n");
  return new Set(lines.map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1]).filter(Boolean));
}

/**
 * Writes a fresh value for each of `names` that neither `env` sets nor the file at `path` holds:
 * creates the file (mode 0600) or appends to it, never rewriting a line. Answers what it did, by name,
 * and the values it wrote.
 */
export function ensureKeys(path, names, env = process.env) {
  const present = namesIn(path);
  const fromEnv = names.filter((name) => env[name]?.trim());
  const kept = names.filter((name) => !fromEnv.includes(name) && present.has(name));
  const written = new Map(
    names
      .filter((name) => !fromEnv.includes(name) && !kept.includes(name))
      .map((name) => [name, GENERATORS[name]()]),
  );
  const lines = [...written].map(([name, value]) => lineOf(name, value)).join("");
  if (written.size > 0 && present.size === 0 && !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    // "wx": fails if the file exists, so a file that appeared meanwhile is never overwritten.
    writeFileSync(path, HEADER.map((line) => `${line}\n`).join("") + lines, { flag: "wx", mode: 0o600 });
  } else if (written.size > 0) {
    const text = readFileSync(path, "utf8");
    appendFileSync(path, (text === "" || text.endsWith("\n") ? "" : "\n") + lines);
  }
  return { written, kept, fromEnv };
}

/**
 * `npm start`'s first run: creates the file with LOCAL_KEYS unless it exists. Answers the new operator
 * key, or undefined when the file was already there (then it is left untouched).
 */
export function createKeysFile(path) {
  if (existsSync(path)) return undefined;
  try {
    return ensureKeys(path, LOCAL_KEYS, {}).written.get("LEADGATE_BOOTSTRAP_OPERATOR_KEY");
  } catch (error) {
    if (error.code === "EEXIST") return undefined;
    throw error;
  }
}

/** What `npm start` prints when it created .env: the operator key (only here) and where both keys live. */
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

const SHOW = "docker compose run --rm keys show";

/** `ensure`: the `keys` service of docker-compose.yml, on every `docker compose up`. Prints names only. */
function ensureCommand(path) {
  const { written, kept, fromEnv } = ensureKeys(path, COMPOSE_KEYS);
  const list = (names) => names.join(", ");
  if (fromEnv.length > 0) console.log(`leadgate: set in the environment, not written: ${list(fromEnv)}`);
  if (kept.length > 0) console.log(`leadgate: keeping ${list(kept)} in ${path}`);
  if (written.size > 0) {
    console.log(`leadgate: wrote a new ${list([...written.keys()])} to ${path} (mode 0600)`);
    console.log(`leadgate: keys are never printed to this log; to read them: ${SHOW}`);
  }
}

/** `show`: prints the keys file's entries, for the person who asked (`docker compose run --rm keys show`). */
function showCommand(path) {
  if (!existsSync(path)) {
    console.error(`leadgate: no keys file at ${path} (\`docker compose up\` writes it on its first run)`);
    process.exit(1);
  }
  const lines = readFileSync(path, "utf8").split("\n");
  process.stdout.write(
    lines
      .filter((line) => /^[A-Z][A-Z0-9_]*=/.test(line))
      .map((line) => `${line}\n`)
      .join(""),
  );
}

// `node scripts/keys.mjs ensure|show [file]` (default /keys/leadgate.env, the compose volume).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, file] = process.argv.slice(2);
  const path = resolve(file ?? "/keys/leadgate.env");
  if (command === "ensure") ensureCommand(path);
  else if (command === "show") showCommand(path);
  else {
    console.error(`leadgate: unknown command "${command ?? ""}": use \`keys.mjs ensure|show [file]\``);
    process.exit(2);
  }
}
