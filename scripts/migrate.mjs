// `npm run db:migrate`: create the database named by DATABASE_URL if it does not exist yet, then
// apply the migrations with `prisma migrate deploy` (idempotent; runs offline through the
// WebAssembly schema engine, see prisma.config.ts).
import { spawnSync } from "node:child_process";
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
process.exit(result.status ?? 1);
