// docs/openapi.json (equal to the live /docs-json: test/console/openapi.test.ts) under Spectral's
// `spectral:oas` ruleset, the rules generated clients and validators rely on: no error, no warning.
import { readFileSync } from "node:fs";
import { Document, type RulesetDefinition, Spectral } from "@stoplight/spectral-core";
import { Json } from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";

/** Spectral's severities by number; the bar is none of the first two. */
const SEVERITY = ["error", "warning", "info", "hint"];
const BAR = ["error", "warning"];

describe("docs/openapi.json under spectral:oas", () => {
  it("has no error and no warning", async () => {
    const file = new URL("../../docs/openapi.json", import.meta.url);
    const spectral = new Spectral();
    // As a .spectral.yaml's `extends: spectral:oas` (its recommended rules).
    spectral.setRuleset({ extends: [[oas as RulesetDefinition, "recommended"]] });
    const results = await spectral.run(new Document(readFileSync(file, "utf8"), Json, file.pathname));
    const problems = results
      .filter((result) => BAR.includes(SEVERITY[result.severity]!))
      .map(
        (result) =>
          `${SEVERITY[result.severity]} ${result.code} at ${result.path.join(".")}: ${result.message}`,
      );
    expect(problems).toEqual([]);
  });
});
