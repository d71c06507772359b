// The console is served by the API itself (src/console-static.ts): the built files at /console/,
// every deep link under /console/… answered with index.html; a missing asset, an unknown API route
// and a request that wants JSON a 404 in api.md's error shape (not the page).
import { readFileSync, readdirSync } from "node:fs";
import { useApp } from "../support/harness.js";

const DIST = new URL("../../console/dist/", import.meta.url);

describe("console: served at /console", () => {
  const app = useApp({});
  let index: string;

  beforeAll(() => {
    index = readFileSync(new URL("index.html", DIST), "utf8");
  });

  it.each([
    "/console",
    "/console/",
    "/console/overview",
    "/console/leads/5f0c2b1e-0000-4000-8000-000000000000",
    "/console/sign-in?next=%2Ffailures",
  ])("%s ⇒ 200 index.html, not cached", async (path) => {
    const answer = await fetch(`${app.url}${path}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
    expect(answer.headers.get("cache-control")).toBe("no-cache");
    expect(await answer.text()).toBe(index);
  });

  it("the built scripts are served, immutable, and the page names them under /console/assets/", async () => {
    const scripts = readdirSync(new URL("assets/", DIST)).filter((name) => name.endsWith(".js"));
    expect(scripts.length).toBeGreaterThan(3);
    const entry = /src="(\/console\/assets\/[^"]+\.js)"/.exec(index)?.[1];
    expect(entry).toBeDefined();
    const answer = await fetch(`${app.url}${entry}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/javascript/);
    expect(answer.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await answer.text()).length).toBeGreaterThan(1000);
  });

  it("a missing asset ⇒ 404 in api.md's error shape", async () => {
    const answer = await fetch(`${app.url}/console/assets/gone-1234.js`);
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({ error: "not_found" });
  });

  it.each([
    ["/admin/no-such-route", "*/*"],
    ["/admin/connections/x/no-such-action", "application/json"],
    ["/console/api/no-such-route", "*/*"],
    ["/console/api/session/extra", "application/json"],
    ["/console/favicon.ico", "*/*"],
    ["/console/overview", "application/json"],
  ])("GET %s (Accept %s) ⇒ 404 in api.md's error shape, not the page", async (path, accept) => {
    const answer = await fetch(`${app.url}${path}`, { headers: { accept } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({ error: "not_found", message: expect.any(String) });
  });

  it("the API's own routes are untouched", async () => {
    const health = await fetch(`${app.url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: "ok" }]);
    const admin = await fetch(`${app.url}/admin/overview`);
    expect([admin.status, ((await admin.json()) as { error: string }).error]).toEqual([401, "unauthorized"]);
  });
});
