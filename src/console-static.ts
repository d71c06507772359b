// The console (docs/console.md): the single-page app Vite builds into console/dist, served at
// /console by the API itself. A file of the build is served as it is (its hashed assets cached for a
// year); any other path under /console/ that can be a screen is a deep link into the app and gets
// index.html. What is not a screen answers 404 in api.md's error shape: an unknown /console/api/
// route, a missing file (a name with an extension), and a request that wants JSON rather than a page.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { NestFastifyApplication } from "@nestjs/platform-fastify";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "./common/app-error.js";
import { sendError } from "./common/http-exception.filter.js";

/** console/dist, from src/ (tests) and from dist/ (the build) alike: both sit one level below the root. */
export const CONSOLE_DIST = fileURLToPath(new URL("../console/dist/", import.meta.url));

const NOT_BUILT = () =>
  new AppError(503, "console_not_built", "The console is not built: run `npm run build`.");
const NO_FILE = () => new AppError(404, "not_found", "No such file.");
const NO_ROUTE = () => new AppError(404, "not_found", "No such route.");

/** Not a screen of the app: an API path, a file name, or a caller that asked for JSON, not a page. */
function notAPage(request: FastifyRequest): boolean {
  const path = request.url.split("?")[0]!;
  if (path.startsWith("/console/api/") || path === "/console/api") return true;
  if (/\.[A-Za-z0-9]+$/.test(path)) return true;
  const accept = request.headers.accept ?? "";
  return accept.includes("application/json") && !accept.includes("text/html");
}

export async function mountConsole(app: NestFastifyApplication, root = CONSOLE_DIST): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const built = existsSync(`${root}index.html`);
  if (built) {
    await fastify.register(fastifyStatic, {
      root,
      prefix: "/console/",
      // One route per built file, so the deep-link route below answers every other path.
      wildcard: false,
      index: false,
      setHeaders: (response, path) => {
        void response.header(
          "cache-control",
          path.includes("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    });
  }
  const page = (request: FastifyRequest, reply: FastifyReply) => {
    if (!built) return sendError(reply, request, NOT_BUILT());
    // A missing asset is a 404, not the page: a stale tab asking for an old chunk must see it fail.
    if (request.url.startsWith("/console/assets/")) return sendError(reply, request, NO_FILE());
    if (notAPage(request)) return sendError(reply, request, NO_ROUTE());
    return reply.header("cache-control", "no-cache").sendFile("index.html");
  };
  fastify.get("/console", page);
  fastify.get("/console/*", page);
}
