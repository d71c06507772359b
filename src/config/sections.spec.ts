import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { CONFIG_SECTIONS } from "./sections.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".spec.ts") ? [path] : [];
  });
}

describe("configuration sections", () => {
  it("put every variable in one section only", () => {
    const keys = Object.values(CONFIG_SECTIONS).flat();
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
  });

  it("are what modules receive: only the entry points and src/config see the whole AppConfig", () => {
    const src = join(process.cwd(), "src");
    const wholeConfig = sourceFiles(src)
      .map((path) => relative(src, path))
      .filter((file) => !file.startsWith("config/") && file.includes("/"))
      .filter((file) => /\bAPP_CONFIG\b/.test(readFileSync(join(src, file), "utf8")));
    expect(wholeConfig).toEqual([]);
  });
});
