// The API process: `npm run start:api` (HTTP on PORT).
import "reflect-metadata";
import { setFlagsFromString } from "node:v8";
import { Logger } from "@nestjs/common";
import { appConfigOrExit } from "./app-config.js";
import { createApiApp } from "./http.js";
import { exitCleanlyOnSignals } from "./lifecycle.js";

// Young-generation collections on the event loop's thread alone. V8's helper threads have to wait
// for a core on a small machine shared with Postgres, and the loop waits for them: under ingest load
// a scavenge took 3.0 ms with them, 2.1 ms without, and ingest gained 4 % (docs/benchmarks.md). V8
// reads this flag at every scavenge, so it applies when set here.
setFlagsFromString("--no-parallel-scavenge");

const config = appConfigOrExit();
const app = await createApiApp(config);
exitCleanlyOnSignals(app, "api");
await app.listen(config.port, "0.0.0.0");
new Logger("main").log({ msg: "api listening", port: config.port });
