import { Global, Module } from "@nestjs/common";
import { HealthController } from "./health.controller.js";
import { MetricsController } from "./metrics.controller.js";
import { Metrics } from "./metrics.js";

@Global()
@Module({
  controllers: [HealthController, MetricsController],
  providers: [Metrics],
  exports: [Metrics],
})
export class ObservabilityModule {}
