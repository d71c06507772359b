// Jest globalSetup: migrate one template database per run; every test file clones its own
// database from it (CREATE DATABASE ... TEMPLATE), so files run in parallel and see only their rows.
// With LEADGATE_TEST_REDIS=cluster (`npm run test:cluster`), also a three-master Redis Cluster of the
// run's own, which every test app then uses (test/support/redis.ts); globalTeardown stops it.
import { execFileSync } from "node:child_process";
import pg from "pg";
import { startRedisCluster } from "./redis-cluster.js";

export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export function databaseUrl(name) {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export default async function globalSetup() {
  const template = `leadgate_test_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  execFileSync("node", ["scripts/migrate.mjs"], {
    env: { ...process.env, DATABASE_URL: databaseUrl(template) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  process.env.LEADGATE_TEST_TEMPLATE = template;
  if (process.env.LEADGATE_TEST_REDIS === "cluster") {
    const cluster = await startRedisCluster(3);
    globalThis.leadgateTestRedisCluster = cluster;
    process.env.LEADGATE_TEST_REDIS_CLUSTER_NODES = cluster.nodes;
  }
}
