// `npm run openapi`: writes docs/openapi.json, the console's API contract (its types are generated
// from it), from the app's live /docs-json. It boots the API app (after `npm run build`) without
// listening; test/console/openapi.test.ts keeps the file equal to the live document.
import { writeFileSync } from "node:fs";

process.env.LEADGATE_ENCRYPTION_KEY ??= Buffer.alloc(32).toString("base64");
process.env.LOG_LEVEL ??= "error";
const { appConfigOrExit } = await import("../dist/app-config.js");
const { createApiApp } = await import("../dist/http.js");
const app = await createApiApp(appConfigOrExit(), false);
await app.init();
const answer = await app.getHttpAdapter().getInstance().inject({ method: "GET", url: "/docs-json" });
if (answer.statusCode !== 200) throw new Error(`/docs-json answered ${answer.statusCode}`);
writeFileSync(
  new URL("../docs/openapi.json", import.meta.url),
  `${JSON.stringify(answer.json(), null, 2)}\n`,
);
await app.close();
console.log("docs/openapi.json written");
