export interface RedisCluster {
  /** The masters' ports on 127.0.0.1 (when it was created). */
  ports: number[];
  /** Every node's port, masters first, then the replicas. */
  allPorts: number[];
  /** REDIS_CLUSTER_NODES for it: `127.0.0.1:P1,127.0.0.1:P2,…` (the masters). */
  nodes: string;
  /** SIGKILL one node: it is gone at once, with whatever it had not replicated yet. */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}
export function startRedisCluster(
  masters?: number,
  options?: { replicas?: number; nodeTimeoutMs?: number },
): Promise<RedisCluster>;
