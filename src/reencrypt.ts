// `npm run secrets:reencrypt`: re-seals every stored secret that is not yet a `v2` envelope under
// the current key, in batches: after LEADGATE_ENCRYPTION_KEY was changed (the old key moved to
// LEADGATE_PREVIOUS_ENCRYPTION_KEYS), and to bind `v1` envelopes (from before envelopes named their
// place) to their table, column and row (`npm run db:migrate` runs it while any is left). Safe to
// run while the API and workers run, and to run again; when it reports nothing left, the previous
// key can be removed from the environment.
import "reflect-metadata";
import { Logger } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { appConfigOrExit } from "./app-config.js";
import { ConfigModule } from "./config/config.module.js";
import { resealConnectionSecrets } from "./connections/connection-secrets.js";
import { CryptoModule } from "./crypto/crypto.module.js";
import { resealOrWarn } from "./crypto/reseal.js";
import { SecretBox } from "./crypto/secret-box.js";
import { notificationChannelPlace } from "./crypto/stored-secrets.js";
import { DatabaseModule } from "./database/database.module.js";
import { PrismaService } from "./database/prisma.service.js";
import { createLogger } from "./observability/logger.js";

const BATCH = 500;

/**
 * Re-seals every stale envelope. One that does not open (its key is not configured, or it is not
 * where it was sealed) is left as it is and counted as `unreadable`, with a warning naming its place.
 */
export async function reencryptAll(
  prisma: PrismaService,
  box: SecretBox,
  logger = new Logger("reencrypt"),
): Promise<{ resealed: number; unreadable: number }> {
  const connections = await resealConnectionSecrets(prisma, box, logger, BATCH);
  const channels = await reencryptChannels(prisma, box, logger);
  return {
    resealed: connections.resealed + channels.resealed,
    unreadable: connections.unreadable + channels.unreadable,
  };
}

/** The same for notification channels' secrets (few rows: one pass). */
async function reencryptChannels(
  prisma: PrismaService,
  box: SecretBox,
  logger: Logger,
): Promise<{ resealed: number; unreadable: number }> {
  let resealed = 0;
  let unreadable = 0;
  const { rows } = await prisma.pool.query<{ id: string; secrets: string }>(
    "SELECT id, secrets FROM notification_channels WHERE secrets IS NOT NULL",
  );
  for (const row of rows) {
    if (!box.isStale(row.secrets)) continue;
    const sealed = resealOrWarn(box, row.secrets, notificationChannelPlace(row.id), logger, {
      channelId: row.id,
      column: "secrets",
    });
    if (sealed === undefined) {
      unreadable += 1;
      continue;
    }
    const updated = await prisma.pool.query(
      "UPDATE notification_channels SET secrets = $1 WHERE id = $2 AND secrets = $3",
      [sealed, row.id, row.secrets],
    );
    resealed += updated.rowCount ?? 0;
  }
  return { resealed, unreadable };
}

class ReencryptModule {}

if (process.argv[1]?.endsWith("reencrypt.js")) {
  const config = appConfigOrExit();
  const app = await NestFactory.createApplicationContext(
    { module: ReencryptModule, imports: [ConfigModule.forRoot(config), DatabaseModule, CryptoModule] },
    { logger: createLogger(config.logLevel) },
  );
  const box = app.get(SecretBox);
  const { resealed, unreadable } = await reencryptAll(app.get(PrismaService), box);
  new Logger("reencrypt").log({
    msg: "stored secrets re-sealed under the current key",
    keyId: box.keyId,
    resealed,
    unreadable,
  });
  await app.close();
}
