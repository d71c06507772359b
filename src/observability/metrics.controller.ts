import { Controller, Get, Headers, Inject, Res } from "@nestjs/common";
import type { FastifyReply } from "fastify";
import { AppError } from "../common/app-error.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { Metrics, scrapeAllowed } from "./metrics.js";

@Controller("metrics")
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  render(
    @Headers("authorization") authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    if (!scrapeAllowed(this.config.metricsToken, authorization)) {
      throw new AppError(401, "unauthorized", "The metrics need Authorization: Bearer <METRICS_TOKEN>.");
    }
    void reply.type("text/plain; version=0.0.4; charset=utf-8");
    return this.metrics.registry.metrics();
  }
}
