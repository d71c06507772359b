import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import helmet, { type HelmetOptions } from "helmet";
import secureJson from "secure-json-parse";
import type { LoggerService } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter, type NestFastifyApplication } from "@nestjs/platform-fastify";
import { AppModule } from "./app.module.js";
import { AppError } from "./common/app-error.js";
import { HttpExceptionFilter, sendError } from "./common/http-exception.filter.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppConfig } from "./config/config.js";
import { bearerMatches } from "./crypto/constant-time.js";
import { METRICS_UNAUTHORIZED, Metrics } from "./observability/metrics.js";
import { PROVIDERS } from "./providers/provider-event.js";
import { mountDocs } from "./observability/docs.js";
import { createLogger } from "./observability/logger.js";
import { ApiKeyGuard } from "./auth/api-key.guard.js";
import { mountQueueDashboard } from "./queues/queue-dashboard.js";
import { mountConsole } from "./console-static.js";
import { JSON_TYPE, WEBHOOK_DOCUMENT, mountWebhooks } from "./ingestion/webhook-routes.js";
import { Queues } from "./queues/queues.js";

const REQUEST_ID_HEADER = "x-request-id";
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** A provider's webhook (src/ingestion/webhook-routes.ts), by its URL: its body errors and headers differ. */
const isWebhook = (url: string) => url.startsWith("/webhooks/");
/**
 * The admin API's and the console API's answers are never stored by a cache (a browser's, a proxy's):
 * some show a secret once (a new key, a rotation's secrets), all show a tenant's data.
 */
const isPrivateApi = (url: string) => url.startsWith("/admin/") || url.startsWith("/console/api/");

/**
 * A body the admin and console APIs refuse: any type but JSON (a form post is what a hostile page
 * can make a browser send without asking; the queue dashboard's own UI is bull-board's).
 */
function notJson(request: FastifyRequest): boolean {
  const type = request.headers["content-type"];
  return (
    type !== undefined &&
    isPrivateApi(request.url) &&
    !request.url.startsWith("/admin/queues") &&
    !JSON_TYPE.test(type)
  );
}

/**
 * JSON bodies: Nest keeps the raw bytes on `request.rawBody` (sender verification runs on them);
 * the parse drops `__proto__`/`constructor` keys. Malformed JSON is the caller's error, named the
 * way api.md names it for the route.
 */
// Nest completes a two-argument parser through the promise it returns.
// eslint-disable-next-line @typescript-eslint/require-await
async function parseJsonBody(request: { url: string }, body: Buffer): Promise<unknown> {
  const webhook = isWebhook(request.url);
  const code = webhook ? "invalid_envelope" : "validation_failed";
  // An admin action without parameters (pause, resume) may come with an empty body.
  if (body.length === 0 && !webhook) return undefined;
  if (body.length === 0) throw new AppError(400, code, "The body is empty; a JSON document is expected.");
  let parsed: unknown;
  try {
    parsed = secureJson.parse(body, { protoAction: "remove", constructorAction: "remove" });
  } catch {
    throw new AppError(400, code, "The body is not valid JSON.");
  }
  const problem = unstorable(parsed);
  if (problem) throw new AppError(400, code, problem);
  return parsed;
}

/** JSON nested deeper than this is refused: no provider sends it, and every later step recurses. */
const MAX_DEPTH = 64;

/**
 * Why a parsed body could never be stored or handled, if it could not: nesting deeper than
 * MAX_DEPTH, or a string Postgres refuses (U+0000, unpaired surrogates). Iterative, so a hostile
 * depth cannot overflow the stack.
 */
function unstorable(root: unknown): string | undefined {
  // Two parallel stacks (value, depth): no pair allocated per value on this per-delivery path.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value === "string") {
      if (!storable(value)) return UNSTORABLE_TEXT;
    } else if (value !== null && typeof value === "object") {
      if (depth >= MAX_DEPTH) return `The body is nested more than ${MAX_DEPTH} levels deep.`;
      if (Array.isArray(value)) {
        for (const item of value as unknown[]) {
          values.push(item);
          depths.push(depth + 1);
        }
        continue;
      }
      for (const key of Object.keys(value)) {
        if (!storable(key)) return UNSTORABLE_TEXT;
        values.push((value as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    }
  }
  return undefined;
}

const UNSTORABLE_TEXT = "The body holds a NUL character or an unpaired surrogate, which cannot be stored.";

/** Text Postgres stores: no U+0000, no unpaired surrogate. */
const storable = (text: string) => text.isWellFormed() && !text.includes("\0");

const PROVIDER_OF_URL = new RegExp(`^/webhooks/(${PROVIDERS.join("|")})/`);

/** The `error` of an answer in api.md's error shape; undefined for anything else. */
function errorCodeOf(payload: string): string | undefined {
  try {
    const { error } = JSON.parse(payload) as { error?: unknown };
    return typeof error === "string" ? error : undefined;
  } catch {
    return undefined; // not JSON: the status code stands for the outcome
  }
}

/**
 * Every webhook delivery's answer counted and timed in one place, whoever produced it: the
 * ingestion service, the body parser (invalid JSON, too deep), or Fastify (413, 415). The outcome
 * is accepted, duplicate or ignored as ingestion answered it (`request.deliveryOutcome`), else the
 * error code of api.md's answer body.
 */
function countDeliveries(app: NestFastifyApplication): void {
  const metrics = app.get(Metrics);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.decorateRequest("deliveryOutcome", undefined);
  // Root hooks here and in createApiApp take `done` rather than being async: no promise and no
  // microtask per request and hook.
  fastify.addHook("onSend", (request, reply, payload, done) => {
    const provider = request.method === "POST" ? PROVIDER_OF_URL.exec(request.url)?.[1] : undefined;
    if (provider && typeof payload === "string") {
      const outcome = request.deliveryOutcome ?? errorCodeOf(payload) ?? String(reply.statusCode);
      metrics.deliveries.inc({ provider, outcome });
      metrics.ingestSeconds.observe({ provider }, reply.elapsedTime / 1000);
    }
    done(null, payload);
  });
}

/** METRICS_TOKEN set: GET /metrics wants `Authorization: Bearer <METRICS_TOKEN>`, else 401. */
function guardMetrics(app: NestFastifyApplication, token: string | undefined): void {
  if (token === undefined) return;
  app
    .getHttpAdapter()
    .getInstance()
    .addHook("onRequest", (request, reply, done) => {
      // The route the router matched, not the URL as sent: `/%6detrics`, `/metrics#x` and an
      // absolute `http://host/metrics` all reach the metrics route too.
      const metrics = request.routeOptions.url === "/metrics";
      if (metrics && !bearerMatches(request.headers.authorization, token)) {
        void reply.code(401).send(METRICS_UNAUTHORIZED); // answered here: the route never runs
        return;
      }
      done();
    });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over the limit, malformed
 * request lines, header timeouts): answered in api.md's error shape and with `Connection: close`,
 * since the socket is closed right after. Without that header a keep-alive client may send its
 * next request on the closing socket and lose it ("other side closed").
 */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, "headers_too_large", "The request headers are larger than the server accepts."],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "request_timeout", "The request was not received in time."],
};

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, code, message] = CLIENT_ERRORS[error.code ?? ""] ?? [
    400,
    "bad_request",
    "The request is not valid HTTP.",
  ];
  const body = JSON.stringify({ error: code, message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Security headers on every answer but the webhooks' (WEBHOOK_SECURITY_HEADERS below), the HTML of
 * /docs and /admin/queues above all: no framing (`frame-ancestors 'none'`, X-Frame-Options DENY),
 * no MIME sniffing, and a CSP that allows what Swagger UI and the queue dashboard load: their own
 * scripts, inline styles, data: images.
 * HSTS is left to the TLS proxy in front (it knows the domain); no upgrade of http asset URLs, so
 * the pages also load where Leadgate is reached over plain HTTP (local runs).
 * One helmet middleware, built once (@fastify/helmet builds one per request: a measurable share of
 * a webhook's CPU), applied to every request's raw response by a root hook.
 */
const SECURITY_HEADERS: HelmetOptions = {
  contentSecurityPolicy: {
    directives: { "frame-ancestors": ["'none'"], "upgrade-insecure-requests": null },
  },
  frameguard: { action: "deny" },
  hsts: false,
};

/**
 * A webhook's answer is JSON for a provider's servers, never a page: it carries the headers OWASP's
 * REST Security Cheat Sheet asks of an API answer (no resources, no framing, no sniffing), not the
 * eleven of a page. Each header is work for every delivery (helmet's eleven cost a fifth of a bare
 * Fastify request, measured: docs/benchmarks.md).
 */
const WEBHOOK_SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

/**
 * The Node server's timeouts: a request must arrive whole within HTTP_REQUEST_TIMEOUT_MS (else
 * 408 and the socket closed: a client trickling its headers or body cannot hold a connection), an
 * idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS, and a socket silent for
 * longer than both is closed whatever it was doing. Node checks the request timeout periodically:
 * at least four times per timeout, at most once a second.
 */
function timeouts(config: AppConfig) {
  const requestTimeout = config.httpRequestTimeoutMs;
  return {
    requestTimeout,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    connectionTimeout: Math.max(requestTimeout, config.httpKeepAliveTimeoutMs),
    http: {
      requestTimeout,
      headersTimeout: Math.min(requestTimeout, 60_000),
      connectionsCheckingInterval: Math.min(1_000, Math.floor(requestTimeout / 4)),
    },
  };
}

/**
 * The router's own refusals, before any route or hook runs (a path parameter over 100 characters, a
 * URL that does not decode): answered in api.md's shape, with the request id, the API headers and
 * no-store, as every other error.
 */
function answerRouterError(error: { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  void reply.header(REQUEST_ID_HEADER, request.id).headers(WEBHOOK_SECURITY_HEADERS);
  if (isPrivateApi(request.url)) void reply.header("cache-control", "no-store");
  sendError(
    reply,
    request,
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? new AppError(414, "uri_too_long", "A path parameter is longer than 100 characters.")
      : new AppError(400, "bad_url", "The URL does not decode (a malformed %-escape)."),
  );
}

/**
 * Builds the API application (not yet listening): Fastify with raw bodies for signature checks,
 * the body limit, request ids echoed in `x-request-id`, and every error in api.md's shape.
 * Fastify's own request logging stays off: URLs can carry `?token=` secrets.
 */
export async function createApiApp(
  config: AppConfig,
  logger: LoggerService | false = createLogger(config.logLevel),
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.webhookBodyLimitBytes,
    ...timeouts(config),
    clientErrorHandler: answerClientError,
    frameworkErrors: answerRouterError,
    trustProxy:
      typeof config.trustProxy === "number"
        ? (_address: string, hop: number) => hop < (config.trustProxy as number)
        : config.trustProxy,
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) => {
      const incoming = request.headers[REQUEST_ID_HEADER];
      return typeof incoming === "string" && REQUEST_ID_PATTERN.test(incoming) ? incoming : randomUUID();
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    rawBody: true,
    logger,
  });
  app.useBodyParser("application/json", { bodyLimit: config.webhookBodyLimitBytes }, parseJsonBody);
  const securityHeaders = helmet(SECURITY_HEADERS);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook("onRequest", (request, reply, done) => {
      void reply.header(REQUEST_ID_HEADER, request.id);
      if (isPrivateApi(request.url)) void reply.header("cache-control", "no-store");
      if (notJson(request)) {
        void reply.headers(WEBHOOK_SECURITY_HEADERS);
        sendError(
          reply,
          request,
          new AppError(
            415,
            "unsupported_media_type",
            "The body must be JSON (Content-Type: application/json).",
          ),
        );
        return; // answered: the route does not run
      }
      if (!isWebhook(request.url)) {
        securityHeaders(request.raw, reply.raw, (error) => done(error as Error | undefined));
        return;
      }
      void reply.headers(WEBHOOK_SECURITY_HEADERS);
      done();
    });
  app.useGlobalFilters(new HttpExceptionFilter());
  countDeliveries(app);
  guardMetrics(app, config.metricsToken);
  mountWebhooks(app);
  // Plugins after the root hooks (Fastify runs a root hook added later only after them).
  mountDocs(app, WEBHOOK_DOCUMENT);
  const guard = app.get(ApiKeyGuard, { strict: false });
  mountQueueDashboard(app, app.get(Queues).all(), config.publicBaseUrl, (request) =>
    guard.authenticateRequest(request, { csrf: false }),
  );
  await mountConsole(app);
  return app;
}
