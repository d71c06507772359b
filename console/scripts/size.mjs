// Prints the gzipped size of the JavaScript the first screen loads (the entry chunk and its static
// imports, from Vite's manifest; lazy chunks such as the chart are not counted) and fails the build
// above the budget (docs/console.md).
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const BUDGET = 250 * 1024;
const dist = new URL("../dist/", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL(".vite/manifest.json", dist), "utf8"));
const entry = Object.keys(manifest).find((key) => manifest[key].isEntry);
const seen = new Set();
const walk = (key) => {
  if (seen.has(key)) return;
  seen.add(key);
  for (const next of manifest[key].imports ?? []) walk(next);
};
walk(entry);
const first = new Set(seen);
// The overview, where a signed-in user lands: its chunk on top (the chart stays lazy).
walk("src/pages/overview.tsx");
let total = 0;
let overview = 0;
let lazy = 0;
for (const [key, chunk] of Object.entries(manifest)) {
  if (!chunk.file.endsWith(".js")) continue;
  const size = gzipSync(readFileSync(new URL(chunk.file, dist))).length;
  if (first.has(key)) total += size;
  if (seen.has(key)) overview += size;
  else lazy += size;
}
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(
  `console: first screen ${kb(total)} gzipped JavaScript, with the overview ${kb(overview)} (budget ${kb(BUDGET)}); other lazy chunks ${kb(lazy)}`,
);
if (overview > BUDGET) {
  console.error("console: the first screen's JavaScript is over budget");
  process.exit(1);
}
