import type { INestApplicationContext } from "@nestjs/common";
import { randomBytes } from "node:crypto";
import type { NewConnection } from "../../src/connections/lifecycle/connection.js";
import { ConnectionsService } from "../../src/connections/connections.service.js";
import { PrismaService } from "../../src/database/prisma.service.js";
import { Transactions } from "../../src/database/transactions.js";

export interface TestConnection {
  tenantId: string;
  connectionId: string;
  webhookUrl: string;
  secrets: Record<string, string>;
}

/** A tenant of this test's own, with one connection created through the real service. */
export async function createTenantWithConnection(
  app: INestApplicationContext,
  connection: Partial<NewConnection> & Pick<NewConnection, "provider" | "inboundAuth">,
): Promise<TestConnection> {
  const tenant = await app
    .get(PrismaService)
    .tenant.create({ data: { name: `tenant-${randomBytes(3).toString("hex")}` } });
  const created = await app.get(Transactions).run((tx) =>
    app.get(ConnectionsService).create(
      tenant.id,
      {
        externalAccountId: `acct-${randomBytes(6).toString("hex")}`,
        displayName: "Test connection",
        ...connection,
      },
      tx,
    ),
  );
  return {
    tenantId: tenant.id,
    connectionId: created.connection.id,
    webhookUrl: created.webhookUrl,
    secrets: created.secrets,
  };
}
