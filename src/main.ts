// The API process: `npm run start:api` (HTTP on PORT).
import "reflect-metadata";
import { Logger } from "@nestjs/common";
import { loadConfigOrExit } from "./config/config.js";
import { createApiApp } from "./http.js";
import { exitCleanlyOnSignals } from "./lifecycle.js";

const config = loadConfigOrExit();
const app = await createApiApp(config);
exitCleanlyOnSignals(app, "api");
await app.listen(config.port, "0.0.0.0");
new Logger("main").log({ msg: "api listening", port: config.port });
