import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from "@nestjs/common";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, unavailable } from "./app-error.js";
import { databaseUnavailable } from "./database-unavailable.js";

export interface ErrorBody {
  error: string;
  message: string;
  details?: unknown;
}

const CODES_BY_STATUS: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  503: "unavailable",
};

const logger = new Logger("http");
const codeOf = (error: unknown): unknown => (error as { code?: unknown } | undefined)?.code;

/** Maps any thrown value to api.md's error body and status. */
export function toErrorResponse(
  error: unknown,
  requestId: string,
): { status: number; body: ErrorBody; headers: Record<string, string> } {
  if (error instanceof AppError) {
    const body: ErrorBody = { error: error.code, message: error.message };
    if (error.details !== undefined) body.details = error.details;
    return { status: error.status, body, headers: error.headers };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    return {
      status,
      body: { error: CODES_BY_STATUS[status] ?? "http_error", message: error.message },
      headers: {},
    };
  }
  // Errors Fastify raises before a route runs (body limit, media type): as they are on the plain
  // Fastify routes (the webhooks), as HttpExceptions on Nest's. Fastify's own (FST_*) keep their
  // message, which names the problem; anything else that carries a 4xx status is still the caller's.
  const fastifyError = error as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (
    typeof fastifyError.statusCode === "number" &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    const status = fastifyError.statusCode;
    const own = typeof fastifyError.code === "string" && fastifyError.code.startsWith("FST_");
    const message =
      own && typeof fastifyError.message === "string" ? fastifyError.message : "The request was rejected.";
    return {
      status,
      body: { error: CODES_BY_STATUS[status] ?? "bad_request", message },
      headers: {},
    };
  }
  if (databaseUnavailable(error)) {
    logger.warn({ msg: "database unavailable; answering 503", requestId, code: codeOf(error) });
    return toErrorResponse(unavailable("The service"), requestId);
  }
  logger.error({
    msg: "unexpected error",
    requestId,
    // Name, code and stack frames only: messages of database and parser errors quote input values.
    error: error instanceof Error ? error.name : typeof error,
    code: codeOf(error),
    frames:
      error instanceof Error
        ? error.stack
            ?.split("\n")
            .filter((line) => line.trimStart().startsWith("at "))
            .slice(0, 8)
            .join("\n")
        : undefined,
  });
  return {
    status: 500,
    body: {
      error: "internal_error",
      message: `Unexpected error; quote request id ${requestId} when reporting it.`,
    },
    headers: {},
  };
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: unknown): void {
  const { status, body, headers } = toErrorResponse(error, request.id);
  void reply.status(status).headers(headers).send(body);
}

@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getResponse<FastifyReply>(), http.getRequest<FastifyRequest>(), error);
  }
}
