import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import { DocumentBuilder, type OpenAPIObject, type ResponseObject, SwaggerModule } from "@nestjs/swagger";
import { completeResponses, errorAnswer, nullableReferences } from "./openapi-responses.js";

/** OpenAPI paths and component schemas written by hand, for routes that are not Nest controllers. */
export interface HandWrittenDocument {
  paths: OpenAPIObject["paths"];
  schemas: NonNullable<OpenAPIObject["components"]>["schemas"];
}

/** The document's tags, each with what it groups: an operation's tag must be one of these. */
const TAGS: Record<string, string> = {
  Webhooks: "Provider-facing webhooks: a 2xx is a promise that the delivery is stored",
  tenants: "Tenants (agencies) and the reply settings their connections inherit",
  clients: "Clients: the businesses a tenant serves, between the tenant and its connections",
  "api-keys": "API keys: created, listed, revoked",
  providers: "The providers this installation has",
  connections: "Provider accounts connected to a tenant: webhooks, secrets, OAuth, sync and backfills",
  receipts: "What was accepted, with its jobs and its duplicate count",
  jobs: "Side effects with their status and attempt history",
  replay: "Replaying jobs: one, a receipt's, or a filtered bulk replay",
  leads: "The lead store, with each lead's messages and first response",
  overview: "The console's first figures for a tenant",
  "speed-to-lead": "How fast leads got their first response",
  conflicts: "The same idempotency key delivered with a different payload",
  audit: "Who did what admin action when",
  alerts: "Alerts and the notification channels they are sent to",
  users: "Console users and their invitations",
  console: "The console's sign-in routes",
  oauth: "The providers' OAuth redirects",
  Health: "Liveness and readiness",
  Metrics: "Prometheus metrics",
  operations: "The queue dashboard and this documentation",
};

/**
 * The OpenAPI document, generated from the controllers and DTOs, at /docs-json with its UI at
 * /docs. Routes that are not Nest's come with their entries written by hand: `byHand` (the webhooks,
 * src/ingestion/webhook-routes.ts), the queue dashboard and the documentation itself. The answers
 * every operation can give, and api.md's error body, are added last (openapi-responses.ts).
 */
export function mountDocs(app: NestFastifyApplication, byHand: HandWrittenDocument): void {
  const builder = new DocumentBuilder()
    .setTitle("Leadgate")
    .setDescription(
      "Provider webhooks (Yelp, Thumbtack, Static Forms) with exactly-once receipts, and the admin API. " +
        "Admin routes take `Authorization: Bearer <api key>`; `x-roles: [operator]` marks operator-only routes.",
    )
    .setVersion("0.1.0")
    .addServer("/", "the installation that serves this document (PUBLIC_BASE_URL)")
    .addBearerAuth({ type: "http", scheme: "bearer", bearerFormat: "API key" });
  for (const [name, description] of Object.entries(TAGS)) builder.addTag(name, description);
  const config = builder.build();
  const document = (): OpenAPIObject => {
    const generated = SwaggerModule.createDocument(app, config);
    Object.assign(generated.paths, byHand.paths);
    generated.components = {
      ...generated.components,
      schemas: { ...generated.components?.schemas, ...byHand.schemas },
    };
    const html = (description: string): ResponseObject => ({
      description,
      content: { "text/html": { schema: { type: "string" } } },
    });
    generated.paths["/admin/queues"] = {
      get: <OpenAPIObject["paths"][string]["get"]>{
        tags: ["operations"],
        summary: "BullMQ dashboard (HTML); operator key as Bearer token or as the Basic password",
        description:
          "The queue dashboard: the BullMQ queues, their jobs and actions, for operators (an operator's console session works too; its changes must come from Leadgate's own origin).",
        operationId: "queueDashboard",
        security: [{ bearer: [] }],
        "x-roles": ["operator"],
        responses: {
          "200": html("the dashboard"),
          "401": errorAnswer("`unauthorized`: no operator key (WWW-Authenticate: Basic)"),
          "403": errorAnswer(
            "`forbidden`: a key or session that is not an operator's; `csrf_failed`: a change from another origin",
          ),
          "429": errorAnswer("`rate_limited`: too many failed authentications from this address"),
        },
      },
    };
    const page = (operationId: string, summary: string, description: string, answer: ResponseObject) => ({
      get: { tags: ["operations"], summary, description, operationId, responses: { "200": answer } },
    });
    generated.paths["/docs"] = page(
      "documentationPage",
      "this documentation (HTML)",
      "Swagger UI over this document.",
      html("this documentation (HTML)"),
    );
    generated.paths["/docs-json"] = page(
      "openApiDocument",
      "this document (OpenAPI 3, JSON)",
      "This OpenAPI document: every route above with its parameters, bodies and answers.",
      {
        description: "this document (OpenAPI 3, JSON)",
        content: { "application/json": { schema: { type: "object" } } },
      },
    );
    completeResponses(generated);
    nullableReferences(generated);
    return generated;
  };
  SwaggerModule.setup("docs", app, document, { raw: ["json"], jsonDocumentUrl: "docs-json" });
}
