export interface RedisCluster {
  /** The masters' ports on 127.0.0.1. */
  ports: number[];
  /** REDIS_CLUSTER_NODES for it: `127.0.0.1:P1,127.0.0.1:P2,…`. */
  nodes: string;
  stop(): Promise<void>;
}
export function startRedisCluster(masters?: number): Promise<RedisCluster>;
