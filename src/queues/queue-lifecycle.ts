import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { DiscoveryService } from "@nestjs/core";
import { BullRegistrar, WorkerHost } from "@nestjs/bullmq";
import type { Worker } from "bullmq";
import type { RedisClient } from "../redis/redis.js";
import { unconsumed } from "./queue-names.js";
import { Queues } from "./queues.js";

/** Injection token of the Redis client BullMQ uses in this process (see QueuesModule). */
export const QUEUE_CONNECTION = Symbol("QUEUE_CONNECTION");
/** Injection token of the process's role: the worker process runs the workers and owns their connection. */
export const QUEUE_ROLE = Symbol("QUEUE_ROLE");
export type QueueRole = "api" | "worker";

/**
 * The lifecycle of the process's queues and workers, in one order:
 * - boot (worker process): one BullMQ worker per `@Processor` class, started only after every
 *   provider is ready; the boot fails if a queue of the vocabulary has no processor;
 * - shutdown: the workers stop taking jobs and finish their active ones (while the database pool,
 *   closed later, still serves them), then the queues close, then the worker connection.
 */
@Injectable()
export class QueueLifecycle implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger("queues");
  private workers: Worker[] = [];

  constructor(
    @Inject(QUEUE_ROLE) private readonly role: QueueRole,
    @Inject(QUEUE_CONNECTION) private readonly connection: RedisClient,
    private readonly queues: Queues,
    private readonly registrar: BullRegistrar,
    private readonly discovery: DiscoveryService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.role !== "worker") return;
    this.registrar.register();
    this.workers = this.discovery
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is WorkerHost => instance instanceof WorkerHost)
      .map((host) => host.worker);
    for (const worker of this.workers)
      worker.on("error", (error) =>
        this.logger.warn({ msg: "worker error", queue: worker.name, error: error.message }),
      );
    const missing = unconsumed(this.workers.map((worker) => worker.name));
    if (missing.length > 0) {
      await this.stopWorkers();
      throw new Error(`no processor registered for queue(s): ${missing.join(", ")}`);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.stopWorkers();
    await Promise.all(this.queues.all().map((queue) => queue.close()));
  }

  /** After every module's onModuleDestroy: the worker connection is the worker process's own. */
  beforeApplicationShutdown(): void {
    if (this.role === "worker") this.connection.disconnect();
  }

  private async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
