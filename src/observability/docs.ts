import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";

/** OpenAPI paths and component schemas written by hand, for routes that are not Nest controllers. */
export interface HandWrittenDocument {
  paths: OpenAPIObject["paths"];
  schemas: NonNullable<OpenAPIObject["components"]>["schemas"];
}

/**
 * The OpenAPI document, generated from the controllers and DTOs, at /docs-json with its UI at
 * /docs. Routes that are not Nest's come with their entries written by hand: `byHand` (the webhooks,
 * src/ingestion/webhook-routes.ts), the queue dashboard and the documentation itself.
 */
export function mountDocs(app: NestFastifyApplication, byHand: HandWrittenDocument): void {
  const config = new DocumentBuilder()
    .setTitle("Leadgate")
    .setDescription(
      "Provider webhooks (Yelp, Thumbtack, Static Forms) with exactly-once receipts, and the admin API. " +
        "Admin routes take `Authorization: Bearer <api key>`; `x-roles: [operator]` marks operator-only routes.",
    )
    .setVersion("0.1.0")
    .addBearerAuth({ type: "http", scheme: "bearer", bearerFormat: "API key" })
    .build();
  const document = (): OpenAPIObject => {
    const generated = SwaggerModule.createDocument(app, config);
    Object.assign(generated.paths, byHand.paths);
    generated.components = {
      ...generated.components,
      schemas: { ...generated.components?.schemas, ...byHand.schemas },
    };
    generated.paths["/admin/queues"] = {
      get: <OpenAPIObject["paths"][string]["get"]>{
        tags: ["operations"],
        summary: "BullMQ dashboard (HTML); operator key as Bearer token or as the Basic password",
        security: [{ bearer: [] }],
        "x-roles": ["operator"],
        responses: { "200": { description: "the dashboard" }, "401": { description: "no operator key" } },
      },
    };
    const page = (summary: string) => ({
      get: { tags: ["operations"], summary, responses: { "200": { description: summary } } },
    });
    generated.paths["/docs"] = page("this documentation (HTML)");
    generated.paths["/docs-json"] = page("this document (OpenAPI 3, JSON)");
    return generated;
  };
  SwaggerModule.setup("docs", app, document, { raw: ["json"], jsonDocumentUrl: "docs-json" });
}
