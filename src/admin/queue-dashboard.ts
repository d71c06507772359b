import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter as BullBoardAdapter } from "@bull-board/fastify";
import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import type { Queue } from "bullmq";
import { ApiKeyGuard } from "../auth/api-key.guard.js";
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

/**
 * The BullMQ dashboard at /admin/queues, for operator keys only. It is a Fastify plugin (not a Nest
 * route), so the key check is an onRequest hook in its own encapsulated scope. Mount it before the
 * app listens (Fastify takes no plugins after boot).
 */
export function mountQueueDashboard(app: NestFastifyApplication, queues: Queue[]): void {
  const serverAdapter = new BullBoardAdapter();
  serverAdapter.setBasePath(BASE_PATH);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  const guard = app.get(ApiKeyGuard, { strict: false });
  void app
    .getHttpAdapter()
    .getInstance()
    .register(
      async (scope) => {
        scope.addHook("onRequest", async (request, reply) => {
          let principal;
          try {
            principal = await guard.authenticate(presentedKey(request.headers.authorization), request.ip);
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
