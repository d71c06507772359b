// `npm start`: Leadgate on one machine without Docker, against the local Postgres and Redis.
// `npm start` builds first (prestart: `npm run build`), then runs this script with `exec`, so that
// the SIGTERM npm forwards reaches it (the shell npm runs scripts in would not pass it on). It:
//   1. loads the keys from .env, creating that file on first run (see scripts/keys.mjs), or from
//      the file LEADGATE_ENV_FILE names; variables set in the environment take precedence;
//   2. migrates (scripts/migrate.mjs, which also creates the database);
//   3. runs the API (dist/main.js) and one worker (dist/worker.js) until Ctrl-C or SIGTERM, which
//      stops both (they finish their work in flight) and exits 0. If one of them dies, the other is
//      stopped and this exits non-zero.
// DATABASE_URL defaults to postgresql://postgres@127.0.0.1:5432/leadgate and REDIS_URL to
// redis://127.0.0.1:6379 (the app's config and scripts/migrate.mjs); every variable of the README's
// table applies.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { announceKeys, createKeysFile } from "./keys.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const envFile = resolve(process.env.LEADGATE_ENV_FILE || join(root, ".env"));
const say = (line) => console.log(`leadgate: ${line}`);
const fail = (line) => {
  console.error(`leadgate: ${line}`);
  process.exit(1);
};

// 1. Keys.
if (!process.env.LEADGATE_ENCRYPTION_KEY?.trim()) {
  const operatorKey = createKeysFile(envFile);
  if (operatorKey !== undefined) announceKeys(envFile, operatorKey, `Both keys live in ${envFile}.`);
}
if (existsSync(envFile)) {
  process.loadEnvFile(envFile); // never overrides a variable already set
  say(`using ${envFile}`);
}
if (!process.env.LEADGATE_ENCRYPTION_KEY?.trim()) {
  fail(`${envFile} has no LEADGATE_ENCRYPTION_KEY: add one (openssl rand -base64 32), or move the file away`);
}

for (const entry of ["dist/main.js", "dist/worker.js"]) {
  if (!existsSync(join(root, entry))) fail(`${entry} is missing: run \`npm run build\` (npm start does)`);
}

// 2. Migrations.
const migration = spawnSync(process.execPath, ["scripts/migrate.mjs"], { cwd: root, stdio: "inherit" });
if (migration.status !== 0) {
  fail(
    `migration failed: is Postgres running, and is DATABASE_URL right? (${redacted(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/leadgate")})`,
  );
}

// 3. The API and one worker. They share this terminal: a Ctrl-C there reaches them as SIGINT
// directly; this script then sends each a SIGTERM too (SIGTERM alone when the signal came from
// elsewhere). Both signals mean "stop cleanly" to them, and one more Ctrl-C forces them down.
const running = new Map();
let stopping = false;
let failed = false;

function stopAll() {
  if (stopping) return;
  stopping = true;
  for (const child of running.values()) child.kill("SIGTERM");
}

// The API's young generation is kept at 4 MiB semi-spaces (V8's default lets it grow to 3 × 16 MiB
// of short-lived request garbage), and its old generation may grow by 15 % of its live size before a
// major collection (V8's default lets request garbage triple it); both processes keep glibc's
// malloc to 2 arenas (MALLOC_ARENA_MAX; its default, 8 per core, holds freed memory in each
// thread's arena): docs/operations.md. The same in package.json, Dockerfile, docker-compose.yml and
// bench/processes.mjs.
const env = { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX || "2" };
for (const [role, args] of [
  ["api", ["--max-semi-space-size=4", "--heap-growing-percent=15", "dist/main.js"]],
  ["worker", ["dist/worker.js"]],
]) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit", env });
  running.set(role, child);
  say(`${role} started (pid ${child.pid})`);
  child.on("exit", (code, signal) => {
    running.delete(role);
    if (!stopping) {
      failed = true;
      say(`${role} exited (${signal ?? `code ${code}`}); stopping the rest`);
      stopAll();
    } else if (code !== 0) {
      failed = true;
      say(`${role} did not stop cleanly (${signal ?? `code ${code}`})`);
    }
    if (running.size === 0) {
      say(failed ? "stopped, with errors" : "stopped");
      process.exit(failed ? 1 : 0);
    }
  });
}
process.on("SIGINT", stopAll);
process.on("SIGTERM", stopAll);
say(`API on http://localhost:${process.env.PORT || 3000} and one worker; Ctrl-C stops both`);

/** A connection URL without its password, for messages. */
function redacted(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "an invalid URL";
  }
}
