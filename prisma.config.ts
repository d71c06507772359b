// Prisma CLI configuration. Migrations run through the WebAssembly schema engine and a driver
// adapter, so `prisma migrate deploy` works offline (see README, "Database").
import { defineConfig } from "prisma/config";
import { PrismaPg } from "prisma-migrate-adapter-pg";

export default defineConfig({
  schema: "prisma/schema.prisma",
  experimental: { adapter: true },
  engine: "js",
  adapter: async () =>
    new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/leadgate" }),
});
