// Creates a tenant and a Static Forms connection (bearer auth; a CRM destination when BENCH_CRM_URL
// is set) through Leadgate's own service;
// prints {id, bearerToken} as JSON. Used by bench/run.mjs.
import "reflect-metadata";
import { NestFactory } from "@nestjs/core";
import { appConfig } from "../dist/app-config.js";
import { AppModule } from "../dist/app.module.js";
import { ConnectionsService } from "../dist/connections/connections.service.js";
import { PrismaService } from "../dist/database/prisma.service.js";
import { Transactions } from "../dist/database/transactions.js";

const app = await NestFactory.createApplicationContext(AppModule.forRoot(appConfig()), { logger: false });
const tenant = await app.get(PrismaService).tenant.create({ data: { name: "bench" } });
const { connection, secrets } = await app.get(Transactions).run((tx) =>
  app.get(ConnectionsService).create(
    tenant.id,
    {
      provider: "staticforms",
      externalAccountId: `bench-${Date.now()}`,
      displayName: "Bench",
      inboundAuth: { type: "bearer" },
      ...(process.env.BENCH_CRM_URL
        ? { settings: { crmDestination: { url: process.env.BENCH_CRM_URL } } }
        : {}),
    },
    tx,
  ),
);
console.log(JSON.stringify({ id: connection.id, tenantId: tenant.id, bearerToken: secrets.bearerToken }));
await app.close();
