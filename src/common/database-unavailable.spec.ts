import { databaseUnavailable } from "./database-unavailable.js";

// The shapes as Prisma 6 (its pg driver adapter) and pg throw them, recorded against a closed port
// and a server answering 57P03 at startup.
const prismaError = (code: string, cause: object) => ({
  name: "PrismaClientKnownRequestError",
  code,
  meta: { driverAdapterError: { name: "DriverAdapterError", cause } },
});
const adapterError = (cause: object) => ({ name: "DriverAdapterError", cause });
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("databaseUnavailable", () => {
  it.each([
    ["a model query, the server not reachable", prismaError("P1001", { kind: "DatabaseNotReachable" })],
    ["a raw query, the server not reachable", prismaError("P2010", { kind: "DatabaseNotReachable" })],
    ["a raw query, the server starting up", prismaError("P2010", { kind: "postgres", code: "57P03" })],
    ["a model query, the server starting up", adapterError({ kind: "postgres", code: "57P03" })],
    ["a model query, the connection closed", adapterError({ kind: "ConnectionClosed" })],
    ["too many connections", { name: "PrismaClientKnownRequestError", code: "P2037" }],
    ["Prisma's pool timed out", { name: "PrismaClientKnownRequestError", code: "P2024" }],
    ["Prisma could not start", { name: "PrismaClientInitializationError" }],
    ["pg, a refused socket", pgError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")],
    ["pg, the server shutting down", pgError("57P01", "terminating connection due to administrator command")],
    ["pg, the server starting up", pgError("57P03", "the database system is starting up")],
    ["pg, too many clients", pgError("53300", "sorry, too many clients already")],
    ["pg, a connection failure", pgError("08006", "connection failure")],
    ["pg, the connection lost", new Error("Connection terminated unexpectedly")],
    ["pg, no pooled connection in time", new Error("timeout exceeded when trying to connect")],
    ["pg, no answer in time", new Error("Query read timeout")],
  ])("%s: unavailable", (_case, error) => {
    expect(databaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a raw query's unique violation", prismaError("P2010", { kind: "postgres", code: "23505" })],
    [
      "a raw query's unique violation, as Prisma names it",
      prismaError("P2010", { kind: "UniqueConstraintViolation" }),
    ],
    ["a model query's unique violation", prismaError("P2002", { kind: "UniqueConstraintViolation" })],
    ["a model query's check violation", adapterError({ kind: "postgres", code: "23514" })],
    ["Prisma's record not found", { name: "PrismaClientKnownRequestError", code: "P2025" }],
    ["pg, a protocol violation (the client's, it would recur)", pgError("08P01", "protocol violation")],
    ["pg, a syntax error", pgError("42601", "syntax error at or near")],
    ["a plain error", new Error("something else")],
    ["a string", "ECONNREFUSED"],
    ["nothing", undefined],
  ])("%s: not unavailable", (_case, error) => {
    expect(databaseUnavailable(error)).toBe(false);
  });
});
