// A provider API on loopback answering well and badly: answers are checked against the schema, and a
// wrong shape is one logged, retryable provider_bad_response (no token, no body in the log).
import { createServer, type Server } from "node:http";
import { Logger, type LoggerService } from "@nestjs/common";
import { Type } from "class-transformer";
import { IsArray, IsInt, IsString, ValidateNested } from "class-validator";
import { classify, CredentialError } from "./errors.js";
import { expand, PROVIDER_BAD_RESPONSE, ProviderApi } from "./provider-api.js";

class Item {
  @IsString() id!: string;
}
class Answer {
  @IsInt() count!: number;
  @IsArray() @ValidateNested({ each: true }) @Type(() => Item) items!: Item[];
}

const TOKEN = "secret-token-0123456789";

describe("ProviderApi", () => {
  let server: Server;
  let api: ProviderApi;
  /** What the server answers next: status and raw body text. */
  let answer: { status: number; text: string } = { status: 200, text: "{}" };
  const received: { method: string; url: string; authorization?: string; body: string }[] = [];
  const warnings: unknown[] = [];
  const capture: LoggerService = {
    log: () => undefined,
    error: () => undefined,
    warn: (message: unknown) => void warnings.push(message),
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        received.push({
          method: request.method ?? "",
          url: request.url ?? "",
          authorization: request.headers.authorization,
          body,
        });
        response.writeHead(answer.status, { "content-type": "application/json" });
        response.end(answer.text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    api = new ProviderApi("acme", `http://127.0.0.1:${address.port}`, 2000, {
      paced: (_provider, _endpoint, call) => call(),
    });
    Logger.overrideLogger(capture);
  });
  afterAll(async () => {
    Logger.overrideLogger(false);
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    received.length = 0;
    warnings.length = 0;
  });

  const failure = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      return error;
    }
    throw new Error("expected the call to fail");
  };
  const getAnswer = () => api.get("/v1/things/{id}?limit=2", { id: "a b/c" }, TOKEN, Answer);

  it("returns a matching answer as a schema instance, with the token and the route's parameters", async () => {
    answer = { status: 200, text: JSON.stringify({ count: 1, items: [{ id: "x" }], extra: true }) };
    const value = await getAnswer();
    expect(value).toBeInstanceOf(Answer);
    expect(value.items[0]).toBeInstanceOf(Item);
    expect(value).toMatchObject({ count: 1, items: [{ id: "x" }] });
    expect(received).toEqual([
      { method: "GET", url: "/v1/things/a%20b%2Fc?limit=2", authorization: `Bearer ${TOKEN}`, body: "" },
    ]);
    expect(warnings).toEqual([]);
  });

  it.each([
    ["not JSON", "<html>busy</html>", "the body is not JSON"],
    ["empty", "", "the body is not JSON"],
    ["a JSON array", "[1]", "the answer is not a JSON object"],
    ["a wrong type", JSON.stringify({ count: "1", items: [] }), "count: count must be an integer number"],
    ["a missing field", JSON.stringify({ count: 1 }), "items: items must be an array"],
    [
      "a wrong nested type",
      JSON.stringify({ count: 1, items: [{ id: 5 }] }),
      "items.0.id: id must be a string",
    ],
  ])("an answer that is %s is a logged, retryable provider_bad_response", async (_what, text, problem) => {
    answer = { status: 200, text };
    const error = await failure(getAnswer);
    expect(classify(error)).toEqual({ kind: "retryable", code: PROVIDER_BAD_RESPONSE });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toEqual({
      msg: "provider answer of the wrong shape",
      provider: "acme",
      endpoint: "GET /v1/things/{id}",
      status: 200,
      errorCode: PROVIDER_BAD_RESPONSE,
      problems: expect.arrayContaining([problem]) as unknown,
    });
    expect(JSON.stringify(warnings)).not.toContain(TOKEN);
  });

  it("does not log a bad answer of a non-2xx status: the status classifies it", async () => {
    answer = { status: 503, text: "<html>down</html>" };
    expect(classify(await failure(getAnswer))).toMatchObject({ kind: "retryable", code: "http_503" });
    answer = { status: 403, text: "nope" };
    expect(classify(await failure(getAnswer))).toMatchObject({ kind: "credential", code: "http_403" });
    expect(warnings).toEqual([]);
  });

  it("without a token: a credential error, and nothing is sent", async () => {
    expect(await failure(() => api.get("/v1/things", {}, undefined, Answer))).toBeInstanceOf(CredentialError);
    expect(received).toEqual([]);
  });

  it("a POST's 2xx is its answer: the body is not read", async () => {
    answer = { status: 201, text: "created, thanks" };
    await api.post("/v1/things/{id}/notes", { id: "t1" }, TOKEN, { text: "hi" });
    expect(received).toEqual([
      { method: "POST", url: "/v1/things/t1/notes", authorization: `Bearer ${TOKEN}`, body: '{"text":"hi"}' },
    ]);
    expect(warnings).toEqual([]);
  });

  it("expands route parameters and refuses a missing one", () => {
    expect(expand("/a/{x}/b/{y}", { x: "1", y: "é" })).toBe("/a/1/b/%C3%A9");
    expect(() => expand("/a/{x}", {})).toThrow(/needs the parameter x/);
  });

  it("keeps every value one segment: separators are encoded, empty and dot-only segments refused", () => {
    expect(expand("/b/{id}/lead_ids", { id: "x/../../admin?y#z%2e" })).toBe(
      "/b/x%2F..%2F..%2Fadmin%3Fy%23z%252e/lead_ids",
    );
    for (const id of ["", ".", "..", "..."]) {
      expect(() => expand("/b/{id}/lead_ids", { id })).toThrow(
        expect.objectContaining({ code: "invalid_path_parameter" }),
      );
    }
    // A query value is no path segment: dots are left as they are.
    expect(expand("/b/{id}?cursor={cursor}", { id: "b1", cursor: ".." })).toBe("/b/b1?cursor=..");
  });
});
