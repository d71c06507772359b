import { databaseUnavailable } from "./database-unavailable.js";

describe("databaseUnavailable", () => {
  it.each([
    ["Prisma can't reach the server", { name: "PrismaClientKnownRequestError", code: "P1001" }],
    ["Prisma's pool timed out", { name: "PrismaClientKnownRequestError", code: "P2024" }],
    ["Prisma could not start", { name: "PrismaClientInitializationError", errorCode: undefined }],
    [
      "a refused socket",
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
    ],
    [
      "the server shutting down",
      { code: "57P01", message: "terminating connection due to administrator command" },
    ],
    ["the server starting up", { code: "57P03", message: "the database system is starting up" }],
    ["too many connections", { code: "53300", message: "sorry, too many clients already" }],
    ["a connection exception", { code: "08006", message: "connection failure" }],
    ["node-postgres' lost connection", new Error("Connection terminated unexpectedly")],
    ["node-postgres' pool timeout", new Error("timeout exceeded when trying to connect")],
  ])("%s: unavailable", (_case, error) => {
    expect(databaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation", { code: "23505", message: "duplicate key value" }],
    ["Prisma's record not found", { name: "PrismaClientKnownRequestError", code: "P2025" }],
    ["a syntax error", { code: "42601", message: "syntax error at or near" }],
    ["a plain error", new Error("something else")],
    ["a string", "ECONNREFUSED"],
    ["nothing", undefined],
  ])("%s: not unavailable", (_case, error) => {
    expect(databaseUnavailable(error)).toBe(false);
  });
});
