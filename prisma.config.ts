// Prisma CLI configuration. Migrations run through the WebAssembly schema engine and a driver
// adapter (@prisma/adapter-pg 7 under an alias: the 6.19 adapter cannot run migrations), so
// `prisma migrate deploy` works offline. The application itself uses @prisma/adapter-pg 6.19.
import { defineConfig } from "prisma/config";
import { PrismaPg } from "prisma-migrate-adapter-pg";

export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: () =>
    Promise.resolve(
      new PrismaPg({
        connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/leadgate",
      }),
    ),
});
