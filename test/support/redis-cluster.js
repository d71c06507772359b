// A Redis Cluster of a test's own, from the installed redis-server: N masters (and, if asked, one
// replica of each) on free loopback ports, each with its cluster config file in a temp dir, joined
// by `redis-cli --cluster create`, then waited for until every node reports cluster_state:ok and
// every replica's link to its master is up. Nothing is persisted. Plain JavaScript: the integration suite's globalSetup (`npm run test:cluster`)
// starts one too, and Jest loads globalSetup untransformed.
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function startNode(dir, port, nodeTimeoutMs) {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir];
  args.push("--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`);
  args.push("--cluster-node-timeout", String(nodeTimeoutMs), "--save", "", "--appendonly", "no");
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => reject(new Error(`redis-server :${port} did not start:\n${output}`)),
      10_000,
    );
    child.stdout.on("data", (chunk) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve({ port, child });
      }
    });
    child.on("exit", (code) => reject(new Error(`redis-server :${port} exited with ${code}:\n${output}`)));
  });
}

async function clusterState(port) {
  const { stdout } = await run("redis-cli", ["-p", String(port), "cluster", "info"]);
  return /cluster_state:(\w+)/.exec(stdout)?.[1];
}

/** A node's role and, for a replica, whether its link to the master is up. */
async function replication(port) {
  const { stdout } = await run("redis-cli", ["-p", String(port), "info", "replication"]);
  return { role: /role:(\w+)/.exec(stdout)?.[1], linkUp: stdout.includes("master_link_status:up") };
}

/** Whether a node is ready: the cluster is ok as it sees it, and a replica is in sync with its master. */
async function nodeReady(port) {
  if ((await clusterState(port)) !== "ok") return false;
  const { role, linkUp } = await replication(port);
  return role === "master" || linkUp;
}

function kill(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  return exited;
}

/**
 * Starts a cluster of `masters` masters, with `replicas` replicas of each (0 or more) and the given
 * `cluster-node-timeout` (how long a silent master takes to be failed over); `nodes` is
 * REDIS_CLUSTER_NODES's value for it (the masters).
 */
export async function startRedisCluster(masters = 3, { replicas = 0, nodeTimeoutMs = 5000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "leadgate-redis-cluster-"));
  const servers = [];
  const stop = async () => {
    await Promise.all(servers.map(({ child }) => kill(child)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let n = 0; n < masters * (1 + replicas); n++) {
      servers.push(await startNode(dir, await freePort(), nodeTimeoutMs));
    }
    const addresses = servers.map(({ port }) => `127.0.0.1:${port}`);
    const create = ["--cluster", "create", ...addresses, "--cluster-replicas", String(replicas)];
    await run("redis-cli", [...create, "--cluster-yes"]);
    const deadline = Date.now() + 20_000;
    for (const { port } of servers) {
      while (!(await nodeReady(port))) {
        if (Date.now() > deadline)
          throw new Error(`node :${port} never became ready (cluster ok, replica in sync)`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const roles = await Promise.all(servers.map(async ({ port }) => (await replication(port)).role));
    const ports = servers.filter((_, n) => roles[n] === "master").map(({ port }) => port);
    const byPort = new Map(servers.map((server) => [server.port, server.child]));
    return {
      ports,
      nodes: ports.map((port) => `127.0.0.1:${port}`).join(","),
      allPorts: [...ports, ...servers.map(({ port }) => port).filter((port) => !ports.includes(port))],
      kill: (port) => kill(byPort.get(port)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
