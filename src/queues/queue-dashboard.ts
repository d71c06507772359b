import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter as BullBoardAdapter } from "@bull-board/fastify";
import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import type { Queue } from "bullmq";
import { AppError } from "../common/app-error.js";
import { sendError } from "../common/http-exception.filter.js";

const BASE_PATH = "/admin/queues";

/** `Bearer <key>`, or Basic with the key as password (what a browser can send to the dashboard). */
function presentedKey(authorization: string | undefined): string | undefined {
  const basic = /^Basic ([A-Za-z0-9+/=]{1,1024})$/.exec(authorization ?? "");
  if (!basic) return authorization;
  const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
  return `Bearer ${decoded.slice(decoded.indexOf(":") + 1)}`;
}

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/** The origin a header names (`Origin`, or a `Referer` URL), or undefined if it names none. */
function originOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether a request may change something: GET and HEAD always (they change nothing); any other
 * method only from `ownOrigin`, as its `Origin` says, or without an `Origin` its `Referer`. A browser
 * sends the operator's Basic credentials with any request a hostile page makes it send (a form post
 * included), and these headers are what a page cannot forge; a request with neither is refused.
 */
export function sameOriginChange(
  method: string,
  headers: { origin?: string; referer?: string },
  ownOrigin: string,
): boolean {
  if (SAFE_METHODS.has(method)) return true;
  const origin = headers.origin !== undefined ? originOf(headers.origin) : originOf(headers.referer);
  return origin !== undefined && origin === ownOrigin;
}

/**
 * Who presents a request to the dashboard (the API-key guard's check, given by the entry point: this
 * folder is infrastructure and knows no keys): a principal with its role, or undefined; a `429`
 * AppError when the caller is over its budget.
 */
export type DashboardAuthentication = (request: {
  method: string;
  ip: string;
  headers: Record<string, string | string[] | undefined>;
}) => Promise<{ role: string } | undefined>;

/**
 * The BullMQ dashboard at /admin/queues, for operator keys and operators' console sessions only; its changes only from
 * PUBLIC_BASE_URL's origin (`publicBaseUrl`). It is a Fastify plugin (not a Nest route), so the
 * checks are an onRequest hook in its own encapsulated scope. Mount it before the app listens
 * (Fastify takes no plugins after boot).
 */
export function mountQueueDashboard(
  app: NestFastifyApplication,
  queues: Queue[],
  publicBaseUrl: string,
  authenticate: DashboardAuthentication,
): void {
  const ownOrigin = new URL(publicBaseUrl).origin;
  const serverAdapter = new BullBoardAdapter();
  serverAdapter.setBasePath(BASE_PATH);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  void app
    .getHttpAdapter()
    .getInstance()
    .register(
      async (scope) => {
        scope.addHook("onRequest", async (request, reply) => {
          // Before the key check: a cross-site request is refused whoever's credentials it carries.
          if (!sameOriginChange(request.method, request.headers, ownOrigin)) {
            return sendError(
              reply,
              request,
              new AppError(
                403,
                "csrf_failed",
                "Changes through the queue dashboard must come from Leadgate's own origin (PUBLIC_BASE_URL).",
              ),
            );
          }
          let principal;
          try {
            // An operator's console session works too (its changes passed the origin check above).
            const authorization = presentedKey(request.headers.authorization);
            principal = await authenticate({
              method: request.method,
              ip: request.ip,
              headers: { ...request.headers, authorization },
            });
          } catch (error) {
            if (error instanceof AppError && error.status === 429) return sendError(reply, request, error);
          }
          if (principal?.role === "operator") return;
          return reply
            .code(principal ? 403 : 401)
            .header("www-authenticate", 'Basic realm="leadgate queues"')
            .send(
              principal
                ? { error: "forbidden", message: "The queue dashboard needs an operator key." }
                : {
                    error: "unauthorized",
                    message: "An operator API key is required (Bearer, or as the Basic password).",
                  },
            );
        });
        await scope.register(serverAdapter.registerPlugin());
      },
      { prefix: BASE_PATH },
    );
}
