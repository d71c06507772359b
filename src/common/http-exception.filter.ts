import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from "@nestjs/common";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "./app-error.js";

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

/** Errors raised by Fastify before a route runs (body parsing), keyed by Fastify's error code. */
const FASTIFY_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: "payload_too_large",
    message: "The body is over the limit.",
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    message: "The body must be JSON (Content-Type: application/json).",
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: "invalid_envelope", message: "The JSON body is empty." },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: "bad_request",
    message: "Content-Length does not match the body.",
  },
};

const logger = new Logger("http");

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
  const fastifyError = error as { code?: unknown; statusCode?: unknown };
  const known = typeof fastifyError.code === "string" ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known)
    return { status: known.status, body: { error: known.code, message: known.message }, headers: {} };
  if (error instanceof SyntaxError && typeof fastifyError.statusCode === "number") {
    return {
      status: 400,
      body: { error: "invalid_envelope", message: "The body is not valid JSON." },
      headers: {},
    };
  }
  if (
    typeof fastifyError.statusCode === "number" &&
    fastifyError.statusCode >= 400 &&
    fastifyError.statusCode < 500
  ) {
    const status = fastifyError.statusCode;
    return {
      status,
      body: { error: CODES_BY_STATUS[status] ?? "bad_request", message: "The request was rejected." },
      headers: {},
    };
  }
  logger.error({
    msg: "unexpected error",
    requestId,
    error: error instanceof Error ? error.stack : String(error),
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
