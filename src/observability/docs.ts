import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";

/**
 * The OpenAPI document, generated from the controllers and DTOs, at /docs-json with its UI at
 * /docs. The queue dashboard and the documentation itself are not Nest routes: added by hand.
 */
export function mountDocs(app: NestFastifyApplication): void {
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
