import { once } from "node:events";
import { Controller, Get, Inject } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse } from "@nestjs/swagger";
import type { RedisClient } from "../redis/redis.js";
import { AppError } from "../common/app-error.js";
import { withTimeout } from "../common/with-timeout.js";
import { PrismaService } from "../database/prisma.service.js";
import { REDIS } from "../redis/redis.module.js";

type CheckResult = "ok" | "down";

const CHECK_TIMEOUT_MS = 2_000;

async function probe(check: () => Promise<unknown>): Promise<CheckResult> {
  try {
    await withTimeout(check(), CHECK_TIMEOUT_MS);
    return "ok";
  } catch {
    return "down";
  }
}

export class Liveness {
  @ApiProperty({ enum: ["ok"] })
  status!: "ok";
}

export class ReadinessChecks {
  @ApiProperty({ enum: ["ok", "down"] })
  postgres!: CheckResult;

  @ApiProperty({ enum: ["ok", "down"] })
  redis!: CheckResult;
}

export class Readiness extends Liveness {
  @ApiProperty({ type: () => ReadinessChecks })
  checks!: ReadinessChecks;
}

@Controller("health")
export class HealthController {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  /** Liveness: answers while the process runs. */
  @ApiOperation({ description: "Liveness: answers 200 while the process runs." })
  @Get()
  @ApiOkResponse({ description: "the process runs", type: Liveness })
  live(): { status: "ok" } {
    return { status: "ok" };
  }

  /** Readiness: Postgres and Redis both answer; otherwise 503 naming the one that failed. */
  @ApiOperation({
    description: "Readiness: 200 when Postgres and Redis answer, else 503 naming the one that failed.",
  })
  @Get("ready")
  @ApiOkResponse({ description: "Postgres and Redis answer", type: Readiness })
  @ApiServiceUnavailableResponse({
    description: "`unavailable`: `details.checks` names the one that is down; Retry-After",
  })
  async ready(): Promise<{ status: "ok"; checks: Record<string, CheckResult> }> {
    const [postgres, redis] = await Promise.all([
      probe(() => this.prisma.$queryRaw`SELECT 1`),
      probe(async () => {
        // Right after boot the client may still be connecting; wait for it within the timeout.
        if (this.redis.status !== "ready") await once(this.redis, "ready");
        return this.redis.ping();
      }),
    ]);
    const checks = { postgres, redis };
    const failed = Object.entries(checks)
      .filter(([, result]) => result === "down")
      .map(([name]) => name);
    if (failed.length > 0) {
      throw new AppError(
        503,
        "unavailable",
        `Not ready: ${failed.join(" and ")} not answering.`,
        { checks },
        {
          "retry-after": "5",
        },
      );
    }
    return { status: "ok", checks };
  }
}
