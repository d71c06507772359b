// The worker process: `npm run start:worker` (BullMQ processors, dispatcher, retention; no HTTP).
import "reflect-metadata";
import { Logger } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { loadConfigOrExit } from "./config/config.js";
import { bearerMatches } from "./crypto/constant-time.js";
import { createLogger } from "./observability/logger.js";
import { exitCleanlyOnSignals } from "./lifecycle.js";
import { Metrics, serveMetrics } from "./observability/metrics.js";
import { WorkerModule } from "./worker.module.js";

const config = loadConfigOrExit();
const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
  logger: createLogger(config.logLevel),
});
exitCleanlyOnSignals(app, "worker");
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
