import { Controller, Get, Header } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiUnauthorizedResponse } from "@nestjs/swagger";
import { Metrics } from "./metrics.js";

@Controller("metrics")
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @ApiOperation({
    description:
      "Prometheus metrics in the text format; with METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>`.",
  })
  @Get()
  @ApiOkResponse({
    description: "the metrics, in Prometheus' text format",
    content: { "text/plain": { schema: { type: "string" } } },
  })
  @ApiUnauthorizedResponse({
    description: "`unauthorized`: METRICS_TOKEN is set and the request does not carry it",
  })
  @Header("content-type", "text/plain; version=0.0.4; charset=utf-8")
  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
