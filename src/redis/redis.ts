import { Redis, type RedisOptions } from "ioredis";

/**
 * A Redis client for request paths: commands fail at once while Redis is unreachable instead of
 * queueing in memory, so ingest and health checks never wait on an outage.
 */
export function createFailFastRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...options,
  });
}
