import pg from "pg";
import { ADMIN_URL } from "./global-setup.js";

export default async function globalTeardown() {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${process.env.LEADGATE_TEST_TEMPLATE} WITH (FORCE)`);
  await admin.end();
  await globalThis.leadgateTestRedisCluster?.stop();
}
