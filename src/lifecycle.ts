import { type INestApplicationContext, Logger } from "@nestjs/common";

const SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * SIGTERM/SIGINT: stop taking work, let in-flight work finish (Nest's onModuleDestroy and
 * beforeApplicationShutdown hooks: HTTP server, BullMQ workers, pools), then exit 0. A shutdown
 * that hangs past the timeout exits 1 so an orchestrator never waits forever.
 */
export function exitCleanlyOnSignals(app: INestApplicationContext, role: string): void {
  const logger = new Logger("main");
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.log({ msg: `${role} stopping`, signal });
    setTimeout(() => {
      logger.error({ msg: `${role} did not stop in time`, timeoutMs: SHUTDOWN_TIMEOUT_MS });
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    app.close().then(
      () => {
        logger.log({ msg: `${role} stopped` });
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ msg: `${role} failed to stop cleanly`, error: String(error) });
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
