import type { Queue } from "bullmq";
import type { RedisClient } from "../redis/redis.js";
import { QUEUE_NAMES, type QueueName } from "./queue-names.js";

/**
 * The process's BullMQ queues by name (the producer side; @nestjs/bullmq creates them, the queues
 * module closes them). Producers take their queue here, typed by the closed vocabulary.
 */
export class Queues {
  constructor(
    private readonly byName: Record<QueueName, Queue>,
    private readonly connection: RedisClient,
  ) {
    // A queue re-emits its connection's errors: logged once by the connection's owner, not per queue.
    for (const queue of this.all()) queue.on("error", () => undefined);
  }

  get<Data>(name: QueueName): Queue<Data> {
    return this.byName[name] as Queue<Data>;
  }

  all(): Queue[] {
    return QUEUE_NAMES.map((name) => this.byName[name]);
  }

  /**
   * Throws unless Redis answers now. BullMQ waits for a connection that is down; a producer must
   * not (nor pile up commands meanwhile), so it checks this first and leaves the job to the dispatcher.
   */
  assertConnected(): void {
    if (this.connection.status !== "ready") throw new Error(`redis is ${this.connection.status}`);
  }
}
