// The OpenAPI document's last steps (src/observability/docs.ts), each in one place:
// - completeResponses: the answers every operation of a kind can give (the routes declare only
//   their own: a 409's codes, a 422, a 501, a provider's 502/503), and api.md's one error shape
//   referenced by every error answer. A status a route declares itself is kept as it is; an error
//   answer declared without a body gets ErrorBody;
// - nullableReferences: a nullable object field in the form OAS 3.0.3 reads as nullable.
import type { OpenAPIObject } from "@nestjs/swagger";

type Operation = NonNullable<OpenAPIObject["paths"][string]["get"]>;
type Responses = Operation["responses"];
type Schemas = NonNullable<NonNullable<OpenAPIObject["components"]>["schemas"]>;

export const ERROR_SCHEMA_NAME = "ErrorBody";
export const ERROR_SCHEMA_REF = `#/components/schemas/${ERROR_SCHEMA_NAME}`;

/** api.md: `{ error, message, details? }`, whatever layer refuses the request. */
export const ERROR_SCHEMA: Schemas = {
  [ERROR_SCHEMA_NAME]: {
    type: "object",
    description: "Every error answer, whatever layer refuses the request (api.md)",
    required: ["error", "message"],
    additionalProperties: false,
    properties: {
      error: { type: "string", description: "the error's code", example: "validation_failed" },
      message: { type: "string", description: "a readable sentence" },
      details: {
        description:
          "more about some errors: `validation_failed` maps each field to its errors; `/health/ready` names its checks",
      },
    },
  },
};

/** A documented error answer: a description and api.md's error body. */
export function errorAnswer(description: string) {
  return {
    description,
    content: { "application/json": { schema: { $ref: ERROR_SCHEMA_REF } } },
  };
}

/** Paths that never touch Postgres (no 503 from a database outage). */
const NO_DATABASE = new Set(["/health", "/metrics", "/docs", "/docs-json"]);
const BODY_METHODS = new Set(["post", "put", "patch", "delete"]);
const PRIVATE_API = /^\/(?:admin|console\/api)\//;

/** The statuses an operation can give whatever it does, by what it is. */
function commonAnswers(path: string, method: string, operation: Operation): Record<string, string> {
  const parameters = (operation.parameters ?? []) as { in?: string; name?: string }[];
  const inPath = parameters.some((p) => p.in === "path");
  const admin = path.startsWith("/admin/");
  const answers: Record<string, string> = {};
  if (inPath) {
    answers["400"] = "`bad_url`: a path parameter that does not decode (a malformed %-escape)";
    answers["414"] = "`uri_too_long`: a path parameter longer than 100 characters";
  }
  if (BODY_METHODS.has(method)) {
    answers["400"] ??= "`validation_failed`: the body is not valid JSON";
    answers["413"] = "`payload_too_large`: the body is over WEBHOOK_BODY_LIMIT_BYTES (default 256 KiB)";
  }
  if (BODY_METHODS.has(method) || PRIVATE_API.test(path)) {
    answers["415"] = "`unsupported_media_type`: a body (or a Content-Type) that is not JSON";
  }
  const idInQuery = parameters.some((p) => p.in === "query" && /Id$/.test(p.name ?? ""));
  if (admin && (inPath || idInQuery || operation.requestBody)) {
    answers["404"] =
      "`not_found`: no such id in the caller's scope, in the path, the query or the body (another tenant's ids answer 404 too)";
  }
  if (!NO_DATABASE.has(path)) {
    answers["503"] = "`unavailable`: the database could not answer now, with Retry-After";
  }
  answers["500"] = "`internal_error`: unexpected; the message quotes the request id (x-request-id)";
  return answers;
}

/** 429 and 503 tell when to try again (api.md: `429` + `Retry-After`, `503` + `Retry-After`). */
const RETRY_STATUSES = new Set(["429", "503"]);
const RETRY_AFTER = {
  "Retry-After": {
    description: "seconds to wait before trying again (every 429 and a database `unavailable` 503 carry it)",
    schema: { type: "integer", minimum: 1 },
  },
};

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

/**
 * Adds to every operation of `document` the statuses it can give that it does not list, and gives
 * every error answer without a body api.md's error body. Changes the document in place.
 */
export function completeResponses(document: OpenAPIObject): void {
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...ERROR_SCHEMA },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const responses: Responses = operation.responses;
      for (const [status, description] of Object.entries(commonAnswers(path, method, operation))) {
        responses[status] ??= { description };
      }
      for (const [status, answer] of Object.entries(responses)) {
        if (!answer || !/^[45]/.test(status) || "$ref" in answer) continue;
        if (!answer.content)
          responses[status] = { ...answer, content: errorAnswer(answer.description).content };
        if (RETRY_STATUSES.has(status)) responses[status] = { headers: RETRY_AFTER, ...responses[status]! };
      }
      operation.responses = sorted(responses);
    }
  }
}

/** Responses in status order (the document reads as a table). */
function sorted(responses: Responses): Responses {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** The schema only `null` matches, in OAS 3.0.3's terms (`nullable` adds null to `type`; `enum` allows only it). */
const NULL_ONLY = { type: "object", nullable: true, enum: [null] };

/**
 * `@ApiProperty({ type: () => X, nullable: true })` comes out of Nest as `nullable` beside
 * `allOf: [$ref X]`, which OAS 3.0.3 reads as never null (`nullable` adds null only to the `type`
 * beside it; the `$ref` still refuses null). Each such schema becomes `anyOf: [$ref X, null only]`,
 * its description kept. Changes the document in place.
 */
export function nullableReferences(document: OpenAPIObject): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== "object") return;
    const schema = node as Record<string, unknown>;
    const parts = schema.allOf;
    if (schema.nullable === true && Array.isArray(parts) && parts.length === 1) {
      const { nullable: _nullable, type: _type, allOf: _allOf, ...rest } = schema;
      for (const key of Object.keys(schema)) delete schema[key];
      Object.assign(schema, rest, { anyOf: [parts[0], NULL_ONLY] });
    }
    Object.values(schema).forEach(visit);
  };
  visit(document.components?.schemas);
  visit(document.paths);
}
