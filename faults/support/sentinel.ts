// A Redis Sentinel topology of the fault suite's own, from the installed redis-server: one master,
// one replica and three sentinels on loopback ports, each with a writable config file in a temp dir
// (sentinels rewrite theirs on a failover). Nothing is persisted: a killed node loses what it held.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../../test/support/process.js";

export const MASTER_NAME = "leadgate";

interface Node {
  port: number;
  child: ChildProcess;
}

function startServer(
  dir: string,
  name: string,
  port: number,
  lines: string[],
  sentinel: boolean,
): Promise<Node> {
  const file = join(dir, `${name}.conf`);
  const base = [`port ${port}`, "bind 127.0.0.1", `dir ${dir}`, `logfile ""`];
  const data = sentinel ? [] : ['save ""', "appendonly no"];
  writeFileSync(file, [...base, ...data, ...lines].join("\n") + "\n");
  const child = spawn("redis-server", sentinel ? [file, "--sentinel"] : [file], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 10_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections|Sentinel ID is/.test(output)) {
        clearTimeout(timer);
        resolve({ port, child });
      }
    });
    child.on("exit", (code) => reject(new Error(`${name} exited with ${code}:\n${output}`)));
  });
}

async function kill(node: Node): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exited = new Promise((resolve) => node.child.once("exit", resolve));
  node.child.kill("SIGKILL");
  await exited;
}

export class SentinelRedis {
  private constructor(
    private readonly dir: string,
    readonly master: Node,
    readonly replica: Node,
    readonly sentinels: Node[],
  ) {}

  /** Master, replica (in sync), three sentinels that agree on the master (quorum 2, down after 2 s). */
  static async start(): Promise<SentinelRedis> {
    const dir = mkdtempSync(join(tmpdir(), "leadgate-faults-sentinel-"));
    const master = await startServer(dir, "master", await freePort(), [], false);
    const replica = await startServer(
      dir,
      "replica",
      await freePort(),
      [`replicaof 127.0.0.1 ${master.port}`],
      false,
    );
    const sentinels: Node[] = [];
    for (let n = 0; n < 3; n++) {
      sentinels.push(
        await startServer(
          dir,
          `sentinel-${n}`,
          await freePort(),
          [
            `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 2`,
            `sentinel down-after-milliseconds ${MASTER_NAME} 2000`,
            `sentinel failover-timeout ${MASTER_NAME} 10000`,
            `sentinel parallel-syncs ${MASTER_NAME} 1`,
          ],
          true,
        ),
      );
    }
    const topology = new SentinelRedis(dir, master, replica, sentinels);
    await topology.waitUntilReady();
    return topology;
  }

  /** The REDIS_SENTINELS value. */
  get addresses(): string {
    return this.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(",");
  }

  /** The master's port as each sentinel names it (undefined: that sentinel did not answer). */
  async masterPorts(): Promise<(number | undefined)[]> {
    return Promise.all(
      this.sentinels.map(async ({ port }) => {
        const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => null });
        client.on("error", () => undefined);
        try {
          await client.connect();
          const reply = (await client.call("SENTINEL", "get-master-addr-by-name", MASTER_NAME)) as
            [string, string] | null;
          return reply ? Number(reply[1]) : undefined;
        } catch {
          return undefined;
        } finally {
          client.disconnect();
        }
      }),
    );
  }

  /** A client of one data node (the scenario reads what Leadgate wrote on the new master). */
  client(port: number): Redis {
    const client = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1 });
    client.on("error", () => undefined);
    return client;
  }

  /** SIGKILL the master: it is gone at once, with whatever it had not replicated yet. */
  killMaster(): Promise<void> {
    return kill(this.master);
  }

  /** Every sentinel knows the replica and the other sentinels, and the replica's link is up. */
  private async waitUntilReady(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const replica = this.client(this.replica.port);
    const sentinel = this.client(this.sentinels[0]!.port);
    try {
      for (;;) {
        const info = await replica.info("replication").catch(() => "");
        const masters = (await sentinel.call("SENTINEL", "master", MASTER_NAME).catch(() => [])) as string[];
        const field = (name: string) => Number(masters[masters.indexOf(name) + 1] ?? 0);
        if (
          info.includes("master_link_status:up") &&
          field("num-slaves") >= 1 &&
          field("num-other-sentinels") >= 2
        )
          return;
        if (Date.now() > deadline) throw new Error(`sentinel topology not ready: ${info}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      replica.disconnect();
      sentinel.disconnect();
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.master, this.replica, ...this.sentinels].map(kill));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
