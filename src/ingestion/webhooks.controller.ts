import { Controller, Get, Inject, Param, Post, Query, Req, Res } from "@nestjs/common";
import type { RawBodyRequest } from "@nestjs/common";
import type { FastifyReply, FastifyRequest } from "fastify";
import { PreauthBudget } from "../auth/preauth-budget.js";
import { AppError } from "../common/app-error.js";
import type { InboundDelivery } from "../providers/provider-adapter.js";
import type { Provider } from "../providers/provider-event.js";
import { YelpAdapter } from "../providers/yelp/yelp.adapter.js";
import { IngestionService, type IngestAnswer, type Route, outcomeOf } from "./ingestion.service.js";

declare module "fastify" {
  interface FastifyRequest {
    /** A delivery's outcome once ingestion answered it (counted by src/http.ts without parsing the answer). */
    deliveryOutcome?: string;
  }
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Query parameters given once; a repeated one (`?token=a&token=b`) counts as absent. */
function singleValues(query: unknown): Record<string, string | undefined> {
  const entries = Object.entries((query ?? {}) as Record<string, unknown>);
  return Object.fromEntries(
    entries.filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** The raw request as adapters see it. Bodies that are not JSON are refused before anything else. */
function deliveryOf(request: RawBodyRequest<FastifyRequest>): InboundDelivery {
  if (!JSON_TYPE.test(request.headers["content-type"] ?? "")) {
    throw new AppError(
      415,
      "unsupported_media_type",
      "The body must be JSON (Content-Type: application/json).",
    );
  }
  return {
    rawBody: request.rawBody ?? Buffer.alloc(0),
    body: request.body,
    headers: request.headers,
    query: singleValues(request.query),
    ip: request.ip,
  };
}

/** Provider-facing webhooks (api.md). A 2xx is a promise: it is sent only after the write committed. */
@Controller("webhooks")
export class WebhooksController {
  constructor(
    private readonly ingestion: IngestionService,
    @Inject(YelpAdapter) private readonly yelp: YelpAdapter,
    private readonly budget: PreauthBudget,
  ) {}

  /** Yelp's URL token (and sender IP): a failure counts against the IP's PREAUTH_FAILURE_LIMIT. */
  private async verifyYelp(token: string, ip: string): Promise<void> {
    try {
      this.yelp.verifyPlatform(token, ip);
    } catch (error) {
      throw error instanceof AppError ? await this.budget.failed(ip, error) : error;
    }
  }

  @Post("staticforms/:connectionId")
  staticForms(
    @Param("connectionId") connectionId: string,
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.receive("staticforms", { connectionId }, request, reply);
  }

  @Post("thumbtack/:connectionId")
  thumbtack(
    @Param("connectionId") connectionId: string,
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return this.receive("thumbtack", { connectionId }, request, reply);
  }

  /** Yelp's verification handshake: echo `verification` back. */
  @Get("yelp/:token")
  async yelpHandshake(
    @Param("token") token: string,
    @Query("verification") verification: unknown,
    @Req() request: FastifyRequest,
  ) {
    await this.verifyYelp(token, request.ip);
    return { verification: this.yelp.verification(verification) };
  }

  @Post("yelp/:token")
  async yelpDelivery(
    @Param("token") token: string,
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const delivery = deliveryOf(request);
    await this.verifyYelp(token, delivery.ip);
    return this.answer(
      this.ingestion.ingest("yelp", { accountOf: (d) => this.yelp.accountIdOf(d) }, delivery, request.id),
      request,
      reply,
    );
  }

  private receive(
    provider: Provider,
    route: Route,
    request: RawBodyRequest<FastifyRequest>,
    reply: FastifyReply,
  ) {
    return this.answer(
      this.ingestion.ingest(provider, route, deliveryOf(request), request.id),
      request,
      reply,
    );
  }

  private async answer(pending: Promise<IngestAnswer>, request: FastifyRequest, reply: FastifyReply) {
    const answer = await pending;
    request.deliveryOutcome = outcomeOf(answer);
    void reply.status(answer.status);
    return answer.body;
  }
}
