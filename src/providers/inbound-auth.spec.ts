import type { IncomingHttpHeaders } from "node:http";
import { matches, type InboundCredentials } from "./inbound-auth.js";

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const check = (
  credentials: InboundCredentials,
  headers: IncomingHttpHeaders = {},
  token?: string,
  bodyApiKey?: string,
) => matches(credentials, { headers, query: { token }, bodyApiKey });

describe("inbound credentials", () => {
  it("bearer: the exact token, case-insensitive scheme", () => {
    const credentials: InboundCredentials = { type: "bearer", bearerToken: "s3cret" };
    expect(check(credentials, { authorization: "Bearer s3cret" })).toBe(true);
    expect(check(credentials, { authorization: "bearer s3cret" })).toBe(true);
    expect(check(credentials, { authorization: "Bearer s3cret2" })).toBe(false);
    expect(check(credentials, { authorization: "Basic s3cret" })).toBe(false);
    expect(check(credentials)).toBe(false);
  });

  it("basic: both username and password", () => {
    const credentials: InboundCredentials = { type: "basic", username: "leadhub", password: "test-secret" };
    expect(check(credentials, { authorization: "Basic bGVhZGh1Yjp0ZXN0LXNlY3JldA==" })).toBe(true);
    expect(check(credentials, { authorization: basic("leadhub", "wrong") })).toBe(false);
    expect(check(credentials, { authorization: basic("other", "test-secret") })).toBe(false);
    expect(check(credentials, { authorization: "Basic !!!" })).toBe(false);
  });

  it("header: the configured header's value", () => {
    const credentials: InboundCredentials = { type: "header", headerName: "x-hook-secret", headerValue: "v" };
    expect(check(credentials, { "x-hook-secret": "v" })).toBe(true);
    expect(check(credentials, { "x-hook-secret": "w" })).toBe(false);
    expect(check(credentials, { "x-hook-secret": ["v", "v"] })).toBe(false);
  });

  it("token: the ?token= URL secret", () => {
    const credentials: InboundCredentials = { type: "token", token: "t0k" };
    expect(check(credentials, {}, "t0k")).toBe(true);
    expect(check(credentials, {}, "t0")).toBe(false);
    expect(check(credentials)).toBe(false);
  });

  it("apiKey: the key inside the body", () => {
    const credentials: InboundCredentials = { type: "apiKey", apiKey: "sf_test_0a1b2c3d4e5f" };
    expect(check(credentials, {}, undefined, "sf_test_0a1b2c3d4e5f")).toBe(true);
    expect(check(credentials, {}, undefined, "sf_test_other")).toBe(false);
    expect(check(credentials)).toBe(false);
  });

  it("an empty expected secret never matches a missing one", () => {
    expect(check({ type: "token", token: "" })).toBe(false);
  });
});
