// A Redis Cluster of a test's own, from the installed redis-server: N masters (no replicas) on
// free loopback ports, each with its cluster config file in a temp dir, joined by
// `redis-cli --cluster create`, then waited for until every node reports cluster_state:ok. Nothing
// is persisted. Plain JavaScript: the integration suite's globalSetup (`npm run test:cluster`)
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

function startNode(dir, port) {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir];
  args.push("--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`);
  args.push("--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no");
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

/** Starts a cluster of `masters` masters; `nodes` is REDIS_CLUSTER_NODES's value for it. */
export async function startRedisCluster(masters = 3) {
  const dir = mkdtempSync(join(tmpdir(), "leadgate-redis-cluster-"));
  const servers = [];
  const stop = async () => {
    await Promise.all(
      servers.map(({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        return exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let n = 0; n < masters; n++) servers.push(await startNode(dir, await freePort()));
    const addresses = servers.map(({ port }) => `127.0.0.1:${port}`);
    await run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"]);
    const deadline = Date.now() + 20_000;
    for (const { port } of servers) {
      while ((await clusterState(port)) !== "ok") {
        if (Date.now() > deadline) throw new Error(`node :${port} never reported cluster_state:ok`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return { ports: servers.map(({ port }) => port), nodes: addresses.join(","), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
