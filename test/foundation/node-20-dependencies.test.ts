// Three dependencies' newest versions declare Node ≥ 22, which the machines (Debian's Node 20) do
// not run: package.json's "overrides" pin the last versions that declare Node 20 (docs/testing.md
// "Node"). What Leadgate gets from each, on the Node that runs this test:
// - content-disposition (CommonJS 2.x, so Jest loads it without a stub), by @fastify/static, which
//   serves the console: its reply.download() names the file it sends;
// - cookie 1.x, by light-my-request (Fastify's inject(), which `npm run openapi` uses): a cookie
//   given to inject() reaches the app as the console's session cookie;
// - file-type 21.x, by Nest's FileTypeValidator: a file's type told by its magic number.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import { FileTypeValidator } from "@nestjs/common";
import Fastify from "fastify";
import { signedInUser } from "../support/console.js";
import { OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

/** The version of `name` that `parent` loads (npm's layout: nested under it, else hoisted). */
function versionFor(parent: string, name: string): string | undefined {
  for (const dir of [`node_modules/${parent}/node_modules/${name}`, `node_modules/${name}`]) {
    if (existsSync(`${dir}/package.json`)) {
      return (JSON.parse(readFileSync(`${dir}/package.json`, "utf8")) as { version: string }).version;
    }
  }
  return undefined;
}

describe("dependencies pinned to their Node 20 versions", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  it("the installed versions are the overrides'", () => {
    expect(versionFor("@fastify/static", "content-disposition")).toBe("2.0.1");
    expect(versionFor("light-my-request", "cookie")).toBe("1.1.1");
    expect(versionFor("@nestjs/common", "file-type")).toBe("21.3.4");
  });

  it("content-disposition: @fastify/static's download names the file, non-ASCII names too", async () => {
    const root = mkdtempSync(join(tmpdir(), "leadgate-download-"));
    const server = Fastify();
    try {
      writeFileSync(join(root, "leads.csv"), "id,name\n1,Ann\n");
      await server.register(fastifyStatic, { root, serve: false });
      server.get("/export", (_request, reply) => reply.download("leads.csv"));
      server.get("/export-named", (_request, reply) => reply.download("leads.csv", "leads März.csv"));
      const plain = await server.inject({ method: "GET", url: "/export" });
      expect([plain.statusCode, plain.headers["content-disposition"], plain.body]).toEqual([
        200,
        "attachment; filename=leads.csv",
        "id,name\n1,Ann\n",
      ]);
      const named = await server.inject({ method: "GET", url: "/export-named" });
      expect(named.headers["content-disposition"]).toBe(
        "attachment; filename=\"leads M?rz.csv\"; filename*=UTF-8''leads%20M%C3%A4rz.csv",
      );
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("cookie: a session cookie given to the app's inject() signs the request in", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const [name, value] = user.cookie.split("=") as [string, string];
    const fastify = app.api.app.getHttpAdapter().getInstance();
    const signedIn = await fastify.inject({
      method: "GET",
      url: "/console/api/session",
      cookies: { [name]: value },
    });
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json()).toMatchObject({ user: { email: user.email } });
    const anonymous = await fastify.inject({ method: "GET", url: "/console/api/session" });
    expect(anonymous.statusCode).toBe(401);
  });

  it("file-type: Nest's FileTypeValidator tells a PNG from a CSV that claims to be one", async () => {
    const validator = new FileTypeValidator({ fileType: "image/png" });
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    );
    const file = (buffer: Buffer) =>
      ({ buffer, mimetype: "image/png", size: buffer.length }) as Parameters<typeof validator.isValid>[0];
    expect(await validator.isValid(file(png))).toBe(true);
    expect(await validator.isValid(file(Buffer.from("id,name\n1,Ann\n")))).toBe(false);
  });
});
