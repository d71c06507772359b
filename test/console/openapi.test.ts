// docs/openapi.json is the console's contract: its API types are generated from it (console/
// package.json `types`), so the console builds without a database. This keeps the committed file
// equal to the live /docs-json: a route or parameter changed without `npm run openapi` fails here,
// and a change that breaks the console then fails its type check in `npm run build`.
import { readdirSync, readFileSync } from "node:fs";
import { useApp } from "../support/harness.js";

type Operation = { responses?: Record<string, { content?: { "application/json"?: { schema?: unknown } } }> };

/** Every API path the console's sources name (`"/admin/…"`, `"/console/api/…"` literals). */
function consolePaths(): string[] {
  const root = new URL("../../console/src/", import.meta.url);
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter(
    (file) => /\.tsx?$/.test(file) && !file.endsWith(".d.ts"),
  );
  const named = files.flatMap((file) =>
    [...readFileSync(new URL(file, root), "utf8").matchAll(/"(\/(?:admin|console\/api)\/[^"?]+)"/g)].map(
      (match) => match[1]!,
    ),
  );
  return [...new Set(named)].sort();
}

describe("docs/openapi.json", () => {
  const app = useApp({});

  it("gives every route the console calls a schema for its 2xx answer (204: no body)", async () => {
    const live = (await (await fetch(`${app.url}/docs-json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const paths = consolePaths();
    expect(paths.length).toBeGreaterThan(25);
    const missing = paths.flatMap((path) => {
      const operations = live.paths[path];
      if (!operations) return [`${path}: not documented`];
      return Object.entries(operations).flatMap(([method, operation]) => {
        const success = Object.entries(operation.responses ?? {}).filter(([code]) => code.startsWith("2"));
        const bare = success.filter(
          ([code, answer]) => code !== "204" && !answer.content?.["application/json"]?.schema,
        );
        return success.length === 0 || bare.length > 0 ? [`${method.toUpperCase()} ${path}`] : [];
      });
    });
    expect(missing).toEqual([]);
  });

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
