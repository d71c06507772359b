// docs/openapi.json is the console's contract: its API types are generated from it (console/
// package.json `types`), so the console builds without a database. This keeps the committed file
// equal to the live /docs-json: a route or parameter changed without `npm run openapi` fails here,
// and a change that breaks the console then fails its type check in `npm run build`.
import { readFileSync } from "node:fs";
import { useApp } from "../support/harness.js";

describe("docs/openapi.json", () => {
  const app = useApp({});

  it("equals the live /docs-json (run `npm run openapi` after changing a route)", async () => {
    const committed: unknown = JSON.parse(
      readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
    );
    const live: unknown = await (await fetch(`${app.url}/docs-json`)).json();
    expect(live).toEqual(committed);
  });

  it("documents the routes the console calls", () => {
    const document = JSON.parse(
      readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
    ) as {
      paths: Record<string, Record<string, { parameters?: { name: string }[] }>>;
    };
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/admin/overview",
        "/admin/jobs/summary",
        "/admin/speed-to-lead",
        "/admin/replays",
      ]),
    );
    const query = (path: string) => (document.paths[path]?.get?.parameters ?? []).map((p) => p.name);
    for (const path of ["/admin/leads", "/admin/jobs", "/admin/alerts", "/admin/audit", "/admin/overview"])
      expect([path, query(path)]).toEqual([path, expect.arrayContaining(["tenantId"])]);
  });
});
