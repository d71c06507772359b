// src/'s production source, for the architecture specs beside the code (src/common/table-writers.ts
// scans it): every .ts file but the specs and the generated Prisma client (which writes nothing itself).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { SourceFile } from "../../src/common/table-writers.js";

const SRC = join(process.cwd(), "src");

function paths(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" && dir === SRC ? [] : paths(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".spec.ts") ? [path] : [];
  });
}

/** Every production source file of src/, its path relative to src/ with `/`. */
export function sourceFiles(): SourceFile[] {
  return paths(SRC).map((path) => ({
    path: relative(SRC, path).split(sep).join("/"),
    text: readFileSync(path, "utf8"),
  }));
}
