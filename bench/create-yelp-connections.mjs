// Creates BENCH_YELP_CONNECTIONS tenants' Yelp connections (pasted API tokens) through Leadgate's own
// service, each made a day ago (reconciliation looks no further back than a connection's creation),
// with receipts of the three leads the fake Yelp lists for it; prints their business ids as JSON. Used by bench/reconcile.mjs.
import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { appConfig } from "../dist/app-config.js";
import { AppModule } from "../dist/app.module.js";
import { ConnectionsService } from "../dist/connections/connections.service.js";
import { PrismaService } from "../dist/database/prisma.service.js";
import { Transactions } from "../dist/database/transactions.js";

const count = Number(process.env.BENCH_YELP_CONNECTIONS ?? 2000);
// One tenant holds them all: its cap of live connections is raised to fit.
process.env.MAX_CONNECTIONS_PER_TENANT = String(Math.max(count, 200));
const app = await NestFactory.createApplicationContext(AppModule.forRoot(appConfig()), { logger: false });
const prisma = app.get(PrismaService);
const service = app.get(ConnectionsService);
const transactions = app.get(Transactions);
const tenant = await prisma.tenant.create({ data: { name: "bench-reconcile" } });
const businesses = [];
for (let i = 0; i < count; i += 50) {
  const batch = Array.from(
    { length: Math.min(50, count - i) },
    (_, j) => `bizBench${String(i + j).padStart(6, "0")}`,
  );
  await transactions.run((tx) =>
    Promise.all(
      batch.map((business) =>
        service.create(
          tenant.id,
          {
            provider: "yelp",
            externalAccountId: business,
            displayName: business,
            inboundAuth: { type: "none" },
            credentials: { accessToken: `token-${business}` },
          },
          tx,
        ),
      ),
    ),
  );
  // The steady state: each business's three listed leads already came by webhook (their receipts).
  await prisma.$executeRaw`
    INSERT INTO receipts (tenant_id, connection_id, provider, account_id, idempotency_key, event_id, lead_id, kind,
                          status, occurred_at, payload_digest)
    SELECT c.tenant_id, c.id, 'yelp', c.external_account_id, md5(c.id::text || n), c.external_account_id || '_L' || n || '_ev1',
           c.external_account_id || '_L' || n, 'lead.updated', 'accepted', now() - interval '30 minutes', md5(n::text)
    FROM connections c CROSS JOIN generate_series(1, 3) AS n
    WHERE c.provider = 'yelp' AND c.external_account_id = ANY(${batch})`;
  businesses.push(...batch);
}
await prisma.$executeRaw`UPDATE connections SET created_at = now() - interval '1 day' WHERE provider = 'yelp'`;
console.log(JSON.stringify({ businesses }));
await app.close();
