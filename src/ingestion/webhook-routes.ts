import type { RawBodyRequest } from "@nestjs/common";
import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import type { FastifyReply, FastifyRequest } from "fastify";
import { PreauthBudget } from "../auth/preauth-budget.js";
import { AppError } from "../common/app-error.js";
import { sendError } from "../common/http-exception.filter.js";
import type { OpenAPIObject } from "@nestjs/swagger";
import type { HandWrittenDocument } from "../observability/docs.js";
import type { InboundDelivery } from "../providers/provider-adapter.js";
import { ALL_PLUGINS } from "../providers/plugins.js";
import { AdapterRegistry } from "../providers/registry.js";
import { webhookError } from "../providers/webhook-route.js";
import { IngestionService, type IngestAnswer, outcomeOf } from "./ingestion.service.js";

declare module "fastify" {
  interface FastifyRequest {
    /** A delivery's outcome once ingestion answered it (counted by src/http.ts without parsing the answer). */
    deliveryOutcome?: string;
  }
}

/** A JSON media type (`application/json`, `application/*+json`), with or without parameters. */
export const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Query parameters given once; a repeated one (`?token=a&token=b`) counts as absent. */
function singleValues(query: unknown): Record<string, string | undefined> {
  const entries = Object.entries((query ?? {}) as Record<string, unknown>);
  return Object.fromEntries(
    entries.filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** The raw request as adapters see it. Bodies that are not JSON are refused before anything else. */
function deliveryOf(request: FastifyRequest): InboundDelivery {
  if (!JSON_TYPE.test(request.headers["content-type"] ?? "")) {
    throw new AppError(
      415,
      "unsupported_media_type",
      "The body must be JSON (Content-Type: application/json).",
    );
  }
  return {
    rawBody: (request as RawBodyRequest<FastifyRequest>).rawBody ?? Buffer.alloc(0),
    body: request.body,
    headers: request.headers,
    query: singleValues(request.query),
    ip: request.ip,
  };
}

type Params = Record<string, string>;

/**
 * Provider-facing webhooks (api.md), as plain Fastify routes below Nest's router: a delivery is the
 * API's hottest path, and Nest's route handling (its router proxy, parameter decorators, exception
 * filter) was 7–10 % of the API's CPU per delivery (docs/benchmarks.md). They share everything else
 * with Nest's routes: the JSON body parser, the root hooks (request id, security headers, the
 * delivery metrics of src/http.ts) and api.md's error shape (sendError, as the exception filter).
 * A 2xx is a promise: it is sent only after the write committed.
 */
export function mountWebhooks(app: NestFastifyApplication): void {
  const ingestion = app.get(IngestionService);
  const adapters = app.get(AdapterRegistry);
  const budget = app.get(PreauthBudget);
  const fastify = app.getHttpAdapter().getInstance();

  /** A route's answer as it is; any error, the body parser's and Fastify's included, in api.md's shape. */
  const route =
    (handle: (request: FastifyRequest, params: Params) => Promise<{ status?: number; body: unknown }>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const { status = 200, body } = await handle(request, request.params as Params);
      void reply.status(status);
      return body;
    };
  const options = {
    errorHandler: (error: unknown, request: FastifyRequest, reply: FastifyReply) =>
      sendError(reply, request, error),
  };

  const answered = (request: FastifyRequest, answer: IngestAnswer) => {
    request.deliveryOutcome = outcomeOf(answer);
    return answer;
  };

  // Every plugin's webhook (src/providers/webhook-route.ts): a URL per connection, or one for the
  // platform whose token the adapter checks.
  for (const { id: provider, webhook } of ALL_PLUGINS) {
    if (webhook.by === "connection") {
      fastify.post(
        `/webhooks/${provider}/:connectionId`,
        options,
        route(async (request, { connectionId }) =>
          answered(
            request,
            await ingestion.ingest(
              provider,
              { connectionId: connectionId! },
              deliveryOf(request),
              request.id,
            ),
          ),
        ),
      );
      continue;
    }
    const platform = adapters.get(provider).platform;
    if (!platform)
      throw new Error(`${provider}: a platform-wide webhook needs its adapter's platform checks`);
    /** The URL token (and sender IP): a failure counts against the IP's PREAUTH_FAILURE_LIMIT. */
    const verify = async (token: string, ip: string) => {
      try {
        platform.verifyPlatform(token, ip);
      } catch (error) {
        throw error instanceof AppError ? await budget.failed(ip, error) : error;
      }
    };
    if (platform.handshake) {
      const handshake = platform.handshake.bind(platform);
      fastify.get(
        `/webhooks/${provider}/:token`,
        options,
        route(async (request, { token }) => {
          await verify(token!, request.ip);
          return { body: handshake(request.query as Record<string, unknown>) };
        }),
      );
    }
    fastify.post(
      `/webhooks/${provider}/:token`,
      options,
      route(async (request, { token }) => {
        const delivery = deliveryOf(request);
        await verify(token!, delivery.ip);
        const accountOf = (d: InboundDelivery) => platform.accountIdOf(d);
        return answered(request, await ingestion.ingest(provider, { accountOf }, delivery, request.id));
      }),
    );
  }
}

const errorAnswer = webhookError;

const deliveryAnswers = {
  "202": {
    description: "At least one event of the delivery stored now (answered after the commit)",
    content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookAnswer" } } },
  },
  "200": {
    description:
      "Every event was already stored (`duplicate: true`; a different payload also records a conflict), " +
      "or a recognised envelope whose event kind Leadgate does not act on (`ignored: true`, receipt kept, no jobs)",
    content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookAnswer" } } },
  },
  "400": errorAnswer(
    "`invalid_envelope` (malformed JSON, wrong envelope) or `idempotency_key_mismatch`; nothing written",
  ),
  "401": errorAnswer("`unauthorized`: the sender's credentials do not match; nothing written"),
  "404": errorAnswer("`unknown_connection` (or unknown Yelp business); nothing written"),
  "410": errorAnswer("`connection_disabled`"),
  "413": errorAnswer("`payload_too_large` (WEBHOOK_BODY_LIMIT_BYTES, default 256 KiB)"),
  "415": errorAnswer("`unsupported_media_type`: the body is not JSON"),
  "429": errorAnswer(
    "`rate_limited` (per connection, or too many failed attempts from the IP), with Retry-After; nothing written",
  ),
  "503": errorAnswer(
    "`unavailable`: the database could not take the write now, with Retry-After; nothing written",
  ),
};

const pathParameter = (name: string, description: string) => ({
  name,
  in: "path" as const,
  required: true,
  description,
  schema: { type: "string" },
});

const delivery = (
  { operationId, summary, description }: (typeof ALL_PLUGINS)[number]["webhook"],
  parameter: ReturnType<typeof pathParameter>,
) => ({
  post: {
    tags: ["Webhooks"],
    summary,
    description,
    operationId,
    parameters: [parameter],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
    responses: deliveryAnswers,
  },
});

const connectionId = pathParameter("connectionId", "The connection's id (its webhook URL)");

/** One plugin's webhook paths in the document. */
function webhookPaths({ id, webhook }: (typeof ALL_PLUGINS)[number]): HandWrittenDocument["paths"] {
  if (webhook.by === "connection") {
    return {
      [`/webhooks/${id}/{connectionId}`]: delivery(webhook, connectionId),
    };
  }
  const token = pathParameter("token", webhook.token);
  const handshake = webhook.handshake && {
    get: {
      tags: ["Webhooks"],
      ...webhook.handshake,
      parameters: [token, ...((webhook.handshake.parameters as unknown[] | undefined) ?? [])],
    } as NonNullable<OpenAPIObject["paths"][string]["get"]>,
  };
  return {
    [`/webhooks/${id}/{token}`]: { ...handshake, ...delivery(webhook, token) },
  };
}

/** The webhook routes in /docs-json: they are not Nest routes, so the document is written here, from the plugins (api.md). */
export const WEBHOOK_DOCUMENT: HandWrittenDocument = {
  paths: Object.assign({}, ...ALL_PLUGINS.map(webhookPaths)) as HandWrittenDocument["paths"],
  schemas: {
    WebhookAnswer: {
      type: "object",
      required: ["accepted", "duplicate", "receiptIds"],
      properties: {
        accepted: { type: "boolean", enum: [true] },
        duplicate: { type: "boolean" },
        ignored: { type: "boolean", enum: [true] },
        receiptIds: { type: "array", items: { type: "string", format: "uuid" } },
      },
    },
  },
};
