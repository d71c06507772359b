// The worker process: `npm run start:worker` (BullMQ processors, dispatcher, retention; no HTTP).
import "reflect-metadata";
import { Logger } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { appConfigOrExit } from "./app-config.js";
import { bearerMatches } from "./crypto/constant-time.js";
import { createLogger } from "./observability/logger.js";
import { PrismaService } from "./database/prisma.service.js";
import { exitCleanlyOnSignals } from "./lifecycle.js";
import { Metrics, serveMetrics } from "./observability/metrics.js";
import { WorkerModule } from "./worker.module.js";

const config = appConfigOrExit();
const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
  logger: createLogger(config.logLevel),
});
exitCleanlyOnSignals(app, "worker");
// Prisma loads its query compiler at its first request, whatever the request (~0.3 s of the event
// loop): here, before any job runs, not in the middle of the first pass of a periodic sweep. A
// database that does not answer yet is the workers' and dispatcher's to wait for, not the boot's.
await app.get(PrismaService).$queryRaw`SELECT 1`.catch(() => undefined);
await app.init();
if (config.workerMetricsPort !== undefined) {
  await serveMetrics(app.get(Metrics), {
    port: config.workerMetricsPort,
    host: config.workerMetricsHost,
    authorized: (authorization) =>
      config.metricsToken === undefined || bearerMatches(authorization, config.metricsToken),
  });
}
new Logger("main").log({ msg: "worker started" });
