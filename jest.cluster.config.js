// `npm run test:cluster`: the integration suite (jest.config.js) against a three-master Redis
// Cluster on loopback, which globalSetup starts (LEADGATE_TEST_REDIS=cluster) and every test app uses
// (test/support/redis.ts). File paths after `--` pick files, as with `npm test`.
import config, { integration } from "./jest.config.js";

export default { ...config, projects: [integration] };
