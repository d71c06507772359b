// `npm run test:faults`: the fault-injection suite (faults/). It starts its own Postgres and Redis
// and its own API and worker processes from dist/, so it runs alone (--runInBand) and slowly.
import { base } from "./jest.config.js";

export default {
  ...base,
  testMatch: ["<rootDir>/faults/**/*.test.ts"],
  testTimeout: 300_000,
  // A scenario that fails must not leave the run waiting on its processes' sockets.
  forceExit: true,
};
