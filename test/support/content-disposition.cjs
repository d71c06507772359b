// Jest on Node < 24.9 cannot require() an ES module, and @fastify/static (CommonJS) requires the
// ESM-only content-disposition@3. Only reply.download() uses it; neither Swagger UI nor bull-board does.
"use strict";
function unavailable() {
  throw new Error("content-disposition is stubbed under Jest (test/support/content-disposition.cjs)");
}
module.exports = {
  create: unavailable,
  parse: unavailable,
  format: unavailable,
  decodeExtended: unavailable,
  encodeExtended: unavailable,
};
