// Real requests and answers checked against the OpenAPI document, strictly: the operation and the
// status must be listed, a body must have a documented media type and match its schema (ajv), and
// an object schema that lists properties is closed (an undocumented field is a finding: a client
// generated from the document would not know it). OAS 3.0's `nullable` is read as OAS 3.0.3 says:
// it adds null to the `type` beside it and to nothing else (a `$ref` behind `allOf` stays non-null).
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS whose default export TypeScript's ESM view does not see as callable.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Schema = Record<string, unknown>;
interface MediaType {
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, { content?: Record<string, MediaType> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const ROOT = "openapi";
/** OpenAPI's own keywords that JSON Schema (draft-07) does not have. */
const OAS_ONLY = new Set(["nullable", "example", "xml", "externalDocs", "discriminator"]);

/** One OpenAPI 3.0 schema object as draft-07 JSON Schema (closed objects, 3.0.3's nullable). */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (schema === null || typeof schema !== "object") return schema;
  const source = schema as Schema;
  if (typeof source.$ref === "string") {
    return { $ref: source.$ref.replace("#/components/schemas/", `${ROOT}#/definitions/`) };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (OAS_ONLY.has(key)) continue;
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Schema).map(([name, property]) => [name, toJsonSchema(property)]),
      );
    } else if (["items", "additionalProperties", "not"].includes(key) && typeof value === "object") {
      out[key] = toJsonSchema(value);
    } else if (["allOf", "anyOf", "oneOf"].includes(key)) {
      out[key] = toJsonSchema(value);
    } else out[key] = value;
  }
  if (source.nullable === true && typeof source.type === "string") out.type = [source.type, "null"];
  if (out.properties !== undefined && out.additionalProperties === undefined)
    out.additionalProperties = false;
  return out;
}

export interface Exchange {
  method: string;
  /** The path as requested, query string included. */
  url: string;
  /** The JSON body sent, if any. */
  requestBody?: unknown;
  status: number;
  contentType: string | null;
  text: string;
}

/**
 * A checker of exchanges against `document`. `check` answers the problems of one exchange (none:
 * it conforms); `covered` lists `METHOD path status` of every exchange checked so far.
 */
export function openApiValidator(document: OpenApiDocument) {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  ajv.addSchema(
    {
      $id: ROOT,
      definitions: Object.fromEntries(
        Object.entries(document.components?.schemas ?? {}).map(([name, schema]) => [
          name,
          toJsonSchema(schema),
        ]),
      ),
    },
    ROOT,
  );
  const compiled = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: Schema) => {
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(toJsonSchema(schema) as Schema);
      compiled.set(key, validate);
    }
    return validate;
  };
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  const covered = new Set<string>();

  /** The documented path of a requested one: a literal path wins over a template (`/jobs/summary`). */
  const templateOf = (path: string) =>
    templates
      .filter(({ pattern }) => pattern.test(path))
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0]
      ?.template;

  const explain = (errors: ErrorObject[] | null | undefined) =>
    (errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);

  function check(exchange: Exchange): string[] {
    const method = exchange.method.toLowerCase();
    const path = exchange.url.split("?")[0]!;
    const name = `${exchange.method} ${exchange.url.slice(0, 120)} → ${exchange.status}`;
    const template = templateOf(path);
    const operation = template ? document.paths[template]?.[method] : undefined;
    if (!template || !operation) return [`${name}: no such operation in the document`];
    covered.add(`${exchange.method} ${template} ${exchange.status}`);
    const problems: string[] = [];
    if (exchange.requestBody !== undefined) {
      const schema = operation.requestBody?.content?.["application/json"]?.schema;
      if (!schema) problems.push(`${name}: a JSON body was sent, but the operation documents none`);
      else {
        const validate = validator(`${method} ${template} request`, schema);
        if (!validate(exchange.requestBody))
          problems.push(`${name}: request body: ${explain(validate.errors).join("; ")}`);
      }
    }
    const answer = operation.responses?.[String(exchange.status)] ?? operation.responses?.default;
    if (!answer) return [...problems, `${name}: status ${exchange.status} is not listed`];
    if (exchange.text === "") return problems;
    const mediaType = (exchange.contentType ?? "").split(";")[0]!.trim();
    const content = answer.content?.[mediaType];
    if (!content) {
      const listed = Object.keys(answer.content ?? {}).join(", ") || "no body";
      return [...problems, `${name}: answered ${mediaType || "no type"}, documented: ${listed}`];
    }
    if (mediaType !== "application/json") return problems;
    if (!content.schema) return [...problems, `${name}: JSON answer without a documented schema`];
    const validate = validator(`${method} ${template} ${exchange.status}`, content.schema);
    if (!validate(JSON.parse(exchange.text))) {
      problems.push(`${name}: ${explain(validate.errors).join("; ")}`);
    }
    return problems;
  }

  return { check, covered };
}
