// `npm run db:migrate`: create the database named by DATABASE_URL if it does not exist yet, then
// apply the migrations with `prisma migrate deploy` (idempotent; runs offline through the
// WebAssembly schema engine, see prisma.config.ts). If stored secrets from before envelopes were
// bound to their place (`v1`) are left, it then runs `secrets:reencrypt` (dist/, with
// LEADGATE_ENCRYPTION_KEY), which binds them: the API and workers no longer open `v1` envelopes.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import pg from "pg";

const DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/leadgate";
const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;

async function ensureDatabase(url) {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      console.log(`created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

// The encrypted columns (src/crypto/stored-secrets.ts).
const SECRET_COLUMNS = [
  "inbound_secrets",
  "previous_secrets",
  "credentials",
  "crm_signing_secret",
  "previous_crm_signing_secret",
];

async function hasUnboundEnvelopes(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const where = SECRET_COLUMNS.map((column) => `${column} LIKE 'v1.%'`).join(" OR ");
    const { rows } = await client.query(
      `SELECT EXISTS (SELECT 1 FROM connections WHERE ${where}) AS unbound`,
    );
    return rows[0].unbound;
  } finally {
    await client.end();
  }
}

await ensureDatabase(databaseUrl);
const result = spawnSync("npx", ["prisma", "migrate", "deploy"], {
  stdio: "inherit",
  env: {
    ...process.env,
    DATABASE_URL: databaseUrl,
    // Any existing file: stops the CLI from trying to download the native query engine.
    PRISMA_QUERY_ENGINE_LIBRARY: process.env.PRISMA_QUERY_ENGINE_LIBRARY || "/dev/null",
  },
});
if (result.status !== 0) process.exit(result.status ?? 1);

if (await hasUnboundEnvelopes(databaseUrl)) {
  const script = new URL("../dist/reencrypt.js", import.meta.url);
  if (!existsSync(script)) {
    console.error(
      "unbound (v1) secret envelopes found: run `npm run build`, then `npm run db:migrate` again",
    );
    process.exit(1);
  }
  console.log("binding unbound (v1) secret envelopes to their place (secrets:reencrypt)");
  const reencrypt = spawnSync(process.execPath, [script.pathname], {
    stdio: "inherit",
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  process.exit(reencrypt.status ?? 1);
}
