import type { OpenAPIObject } from "@nestjs/swagger";
import { completeResponses, ERROR_SCHEMA_REF, nullableReferences } from "./openapi-responses.js";

const errorBody = { "application/json": { schema: { $ref: ERROR_SCHEMA_REF } } };

function documentWith(paths: OpenAPIObject["paths"], schemas = {}): OpenAPIObject {
  return { openapi: "3.0.0", info: { title: "t", version: "1" }, paths, components: { schemas } };
}

describe("completeResponses", () => {
  it("adds what an admin route with an id and a body can give, keeps what the route declares, and gives every error answer the error body", () => {
    const document = documentWith({
      "/admin/things/{id}": {
        post: {
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          requestBody: { content: { "application/json": { schema: { type: "object" } } } },
          responses: {
            "200": { description: "ok" },
            "409": { description: "`thing_busy`" },
            "400": { description: "validation_failed" },
          },
        },
      },
    });
    completeResponses(document);
    const responses = document.paths["/admin/things/{id}"]!.post!.responses;
    expect(Object.keys(responses)).toEqual(["200", "400", "404", "409", "413", "414", "415", "500", "503"]);
    expect(responses["409"]).toEqual({ description: "`thing_busy`", content: errorBody });
    expect(responses["400"]).toMatchObject({ description: "validation_failed", content: errorBody });
    expect(responses["200"]).toEqual({ description: "ok" });
    expect(responses["503"]).toMatchObject({ content: errorBody, headers: { "Retry-After": {} } });
    expect(document.components?.schemas?.ErrorBody).toMatchObject({ required: ["error", "message"] });
  });

  it("gives a health route no database outage, and a GET without an id no 404, 413 or 414", () => {
    const document = documentWith({
      "/health": { get: { responses: { "200": { description: "ok" } } } },
      "/admin/providers": { get: { responses: { "200": { description: "ok" } } } },
    });
    completeResponses(document);
    expect(Object.keys(document.paths["/health"]!.get!.responses)).toEqual(["200", "500"]);
    expect(Object.keys(document.paths["/admin/providers"]!.get!.responses)).toEqual([
      "200",
      "415",
      "500",
      "503",
    ]);
  });
});

describe("nullableReferences", () => {
  it("makes `nullable` beside `allOf: [$ref]` an anyOf of the reference and null, and leaves the rest", () => {
    const nullable = {
      nullable: true,
      type: "object",
      description: "null before one",
      allOf: [{ $ref: "#/components/schemas/X" }],
    };
    const plain = { description: "always there", allOf: [{ $ref: "#/components/schemas/X" }] };
    const document = documentWith({}, { Y: { type: "object", properties: { a: nullable, b: plain } } });
    nullableReferences(document);
    expect(document.components?.schemas?.Y).toEqual({
      type: "object",
      properties: {
        a: {
          description: "null before one",
          anyOf: [{ $ref: "#/components/schemas/X" }, { type: "object", nullable: true, enum: [null] }],
        },
        b: plain,
      },
    });
  });
});
