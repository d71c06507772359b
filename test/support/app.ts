import { randomBytes } from "node:crypto";
import type { INestApplicationContext, LoggerService } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import { appConfig } from "../../src/app-config.js";
import type { AppConfig } from "../../src/config/config.js";
import { createApiApp } from "../../src/http.js";
import { WorkerModule } from "../../src/worker.module.js";
import { testRedisEnv } from "./redis.js";

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");

/** A Redis key prefix of this test file's own, so queues of parallel files never meet. */
export function testRedisPrefix(): string {
  return `lgt-${randomBytes(4).toString("hex")}`;
}

/**
 * The fake CRMs of the tests listen on loopback over http: allowed by default (as an operator
 * would allow a LAN CRM). Tests of the outbound check override these.
 */
export const TEST_DESTINATION_ENV = {
  DESTINATION_ALLOW_HTTP: "true",
  DESTINATION_ALLOW_CIDRS: "127.0.0.0/8,::1/128",
};

/** The app's config for a test database, built through the real parser (env vars as in production). */
export function testConfig(databaseUrl: string, env: Record<string, string> = {}): AppConfig {
  return appConfig({
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    REDIS_PREFIX: testRedisPrefix(),
    ...testRedisEnv(),
    ...TEST_DESTINATION_ENV,
    ...env,
  });
}

export interface RunningApi {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

/** The real API application listening on a loopback port of its own. */
export async function startApi(
  config: AppConfig,
  logger: LoggerService | false = false,
): Promise<RunningApi> {
  const app = await createApiApp(config, logger);
  await app.listen(0, "127.0.0.1");
  const address = app.getHttpServer().address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { app, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** The real worker application context (processors, dispatcher) in this process. */
export async function startWorker(config: AppConfig): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger: false });
  await app.init();
  return app;
}
