// How a provider's webhooks reach Leadgate, as its plugin declares them; src/ingestion/webhook-routes.ts
// mounts and documents every plugin's routes from this, naming no provider:
// - `connection`: one URL per connection, `POST /webhooks/<provider>/{connectionId}`;
// - `platform`: one URL for the whole installation, `POST /webhooks/<provider>/{token}`, the token
//   (and the sender) checked by the adapter's `platform`, the connection selected by the account id
//   the adapter reads from the body; optionally a `GET` verification handshake on the same URL.

import { errorAnswer } from "../observability/openapi-responses.js";

/** An OpenAPI operation object, as written by hand (the routes are not Nest routes). */
export type OperationDocument = Record<string, unknown>;

/** A webhook error's documented answer (api.md's `{ error, message }` shape). */
export const webhookError = errorAnswer;

export type WebhookRoute =
  | {
      by: "connection";
      /** The delivery's OpenAPI summary, description (api.md's sentence) and operation id. */
      summary: string;
      description: string;
      operationId: string;
    }
  | {
      by: "platform";
      summary: string;
      description: string;
      operationId: string;
      /** What the URL's `{token}` is, for the document (a variable's name, never its value). */
      token: string;
      /** The handshake's OpenAPI `get` operation (without its path parameter), when it has one. */
      handshake?: OperationDocument;
    };
