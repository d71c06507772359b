// The unit tier (src/**/*.spec.ts) stands in this module for the generated Prisma client
// (src/generated/prisma/client.ts, a build artifact of `npm run prisma:generate`), so unit specs run
// on a fresh clone with no database. A spec may import code that imports the client; one that reaches
// for the database fails here with this message, and belongs in test/ as an integration test.
"use strict";
const message =
  "unit specs do not reach the database: the Prisma client is stubbed in the unit tier (move this test to test/)";
class PrismaClient {
  constructor() {
    throw new Error(message);
  }
}
const Prisma = new Proxy(
  {},
  {
    get(_target, name) {
      throw new Error(`${message}; Prisma.${String(name)} was used`);
    },
  },
);
module.exports = { PrismaClient, Prisma };
