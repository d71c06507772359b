// Jest in ESM mode (NODE_OPTIONS=--experimental-vm-modules, set by `npm test`).
// Unit tests sit beside the code (src/**/*.spec.ts); integration and end-to-end tests in test/.
// globalSetup migrates one template database; every test file clones its own from it.
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: {
    "^(\\.{1,2}/.*)\\.js$": "$1",
    // @fastify/static (CommonJS; Swagger UI, queue dashboard) requires the ESM-only content-disposition@3,
    // which Jest cannot require on Node 20. Only reply.download() uses it: a stub stands in under Jest.
    "^content-disposition$": "<rootDir>/test/support/content-disposition.cjs",
  },
  transform: { "^.+\\.ts$": ["ts-jest", { useESM: true, tsconfig: "tsconfig.json" }] },
  testMatch: ["<rootDir>/src/**/*.spec.ts", "<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/test/support/global-setup.js",
  globalTeardown: "<rootDir>/test/support/global-teardown.js",
  testTimeout: 30000,
};
