// Migrations applied one by one, as `prisma migrate deploy` applies them: by the driver adapter of
// prisma.config.ts, whose executeScript runs each piece between semicolons as its own statement,
// outside any transaction. For the tests of a migration on a database at the previous head.
import { readdirSync, readFileSync } from "node:fs";
import { PrismaPg } from "prisma-migrate-adapter-pg";

const MIGRATIONS = "prisma/migrations";

/** Applies one migration's file the way `prisma migrate deploy` does. */
export async function deploy(url: string, name: string): Promise<void> {
  const adapter = await new PrismaPg({ connectionString: url }).connect();
  try {
    await adapter.executeScript(readFileSync(`${MIGRATIONS}/${name}/migration.sql`, "utf8"));
  } finally {
    await adapter.dispose();
  }
}

/** Applies every migration before `name`, in order: the database at the previous head. */
export async function deployBefore(url: string, name: string): Promise<void> {
  const previous = readdirSync(MIGRATIONS)
    .filter((migration) => /^\d{14}_/.test(migration) && migration < name)
    .sort();
  for (const migration of previous) await deploy(url, migration);
}
