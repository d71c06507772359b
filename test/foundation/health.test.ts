import type { RunningApi } from "../support/app.js";
import { useApp } from "../support/harness.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv } from "../support/redis.js";

describe("GET /health/ready", () => {
  const app = useApp();

  it("answers 200 when Postgres and Redis both answer", async () => {
    const response = await fetch(`${app.url}/health/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", checks: { postgres: "ok", redis: "ok" } });
  });

  it("answers 503 naming Redis when Redis is unreachable", async () => {
    let api: RunningApi | undefined;
    try {
      api = await app.startApi(deadRedisEnv(await freePort()));
      const response = await fetch(`${api.url}/health/ready`);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBeTruthy();
      const body = (await response.json()) as { error: string; message: string; details: unknown };
      expect(body.error).toBe("unavailable");
      expect(body.message).toMatch(/redis/);
      expect(body.message).not.toMatch(/postgres/);
      expect(body.details).toEqual({ checks: { postgres: "ok", redis: "down" } });
      // Liveness is independent of dependencies.
      expect((await fetch(`${api.url}/health`)).status).toBe(200);
    } finally {
      await api?.close();
    }
  });
});
