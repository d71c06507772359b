// The API's edges against the real app on loopback: server timeouts (a slow sender is cut off),
// security headers on the HTML pages, the metrics token (API and worker port), and CIDRs in
// YELP_ALLOWED_IPS.
import { randomUUID } from "node:crypto";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import { OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort } from "../support/process.js";

const METRICS_TOKEN = "metrics-token-0123456789";
const YELP_TOKEN = "yelp-platform-token-0123456789";

/** A raw TCP client: what it received, and when the server closed the socket (ms after open). */
function rawClient(url: string): { socket: Socket; received(): string; closed: Promise<number> } {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  const socket = connect(Number(port), hostname);
  let received = "";
  socket.on("data", (chunk) => (received += chunk.toString()));
  socket.on("error", () => undefined); // a reset counts as closed
  const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now() - started)));
  return { socket, received: () => received, closed };
}

/** The promise's value, or "still open" if it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "still open"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"still open">((resolve) => (timer = setTimeout(() => resolve("still open"), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Postgres that answers every connection's startup with FATAL 57P03 ("starting up"), as one does while it recovers. */
async function startingUpPostgres(): Promise<{ port: number; close: () => Promise<void> }> {
  const fields = Buffer.from("SFATAL\0VFATAL\0C57P03\0Mthe database system is starting up\0\0", "latin1");
  const refusal = Buffer.alloc(5 + fields.length);
  refusal.write("E", 0, "latin1");
  refusal.writeInt32BE(4 + fields.length, 1);
  fields.copy(refusal, 5);
  const server = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", () => socket.end(refusal));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the edges", () => {
  const app = useApp({
    env: {
      HTTP_REQUEST_TIMEOUT_MS: "1000",
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "1000",
      METRICS_TOKEN,
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    },
  });

  describe("server timeouts", () => {
    it("a client trickling its body byte by byte is answered 408 and cut off within the request timeout", async () => {
      const client = rawClient(app.url);
      client.socket.write(
        `POST /webhooks/staticforms/${randomUUID()} HTTP/1.1\r\nHost: x\r\n` +
          "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n",
      );
      // One byte every 100 ms would take 20 s to finish the body.
      const trickle = setInterval(() => client.socket.writable && client.socket.write("{"), 100);
      try {
        const closedAfter = await within(client.closed, 6_000);
        expect(closedAfter).not.toBe("still open");
        expect(closedAfter).toBeLessThan(5_000); // 1 s timeout, checked every 250 ms (the body would take 20 s)
        expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
        expect(client.received()).toContain('"error":"request_timeout"');
      } finally {
        clearInterval(trickle);
        client.socket.destroy();
      }
    });

    it("a client trickling its headers is cut off the same way", async () => {
      const client = rawClient(app.url);
      client.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n");
      const trickle = setInterval(() => client.socket.writable && client.socket.write("X-A: b\r\n"), 100);
      try {
        const closedAfter = await within(client.closed, 6_000);
        expect(closedAfter).not.toBe("still open");
        expect(closedAfter).toBeLessThan(5_000);
        expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
      } finally {
        clearInterval(trickle);
        client.socket.destroy();
      }
    });

    it("an idle keep-alive connection is closed after the keep-alive timeout", async () => {
      const client = rawClient(app.url);
      client.socket.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
      const closedAfter = await within(client.closed, 8_000);
      client.socket.destroy();
      expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(closedAfter).not.toBe("still open");
      expect(closedAfter).toBeLessThan(6_000); // 1 s, plus Node's 1 s keep-alive grace (the default is 72 s)
    });
  });

  describe("security headers", () => {
    /** The page's scripts and stylesheets, resolved against its <base href> or its own URL. */
    const assetsOf = (html: string, pageUrl: string): string[] => {
      const base = new URL(/<base href="([^"]+)"/.exec(html)?.[1] ?? pageUrl, pageUrl);
      return [...html.matchAll(/<(?:script[^>]* src|link[^>]* href)="([^"]+)"/g)].map(
        ([, ref]) => new URL(ref!, base).href,
      );
    };
    const expectHeaders = (headers: Headers) => {
      expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(headers.get("x-content-type-options")).toBe("nosniff");
      expect(headers.get("x-frame-options")).toBe("DENY");
    };
    /** Scripts the CSP (script-src 'self', no 'unsafe-inline') would block: inline, executable ones. */
    const inlineScripts = (html: string) =>
      [...html.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>([\s\S]*?)<\/script>/g)].filter(
        ([, attributes, body]) => !/type="application\/json"/.test(attributes!) && body!.trim() !== "",
      );

    it("the router's refusals (a path parameter over 100 characters, a URL that does not decode) in api.md's shape", async () => {
      const long = "a".repeat(150);
      for (const [path, status, error] of [
        [`/admin/connections/${long}`, 414, "uri_too_long"],
        [`/webhooks/staticforms/${long}`, 414, "uri_too_long"],
        ["/admin/connections/%E0%A4%A", 400, "bad_url"],
      ] as const) {
        const answer = await fetch(`${app.url}${path}`, {
          method: path.startsWith("/webhooks/") ? "POST" : "GET",
          headers: { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" },
          ...(path.startsWith("/webhooks/") ? { body: "{}" } : {}),
        });
        expect([path, answer.status, await answer.json()]).toEqual([
          path,
          status,
          { error, message: expect.any(String) },
        ]);
        expect(answer.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
        expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
      }
    });

    it("/docs: 200 with the headers, no inline script, and every script and stylesheet it names is served", async () => {
      const page = await fetch(`${app.url}/docs`);
      expect(page.status).toBe(200);
      expectHeaders(page.headers);
      const html = await page.text();
      expect(inlineScripts(html)).toEqual([]);
      const assets = assetsOf(html, page.url);
      expect(assets.length).toBeGreaterThanOrEqual(3);
      for (const asset of assets) {
        const answer = await fetch(asset);
        expect([asset, answer.status]).toEqual([asset, 200]);
        expectHeaders(answer.headers);
      }
      expect((await fetch(`${app.url}/docs-json`)).headers.get("x-content-type-options")).toBe("nosniff");
    });

    it("/admin/queues: 200 with the headers for an operator, no inline script, and its assets are served", async () => {
      const authorization = `Basic ${Buffer.from(`operator:${OPERATOR_KEY}`).toString("base64")}`;
      const page = await fetch(`${app.url}/admin/queues`, { headers: { authorization } });
      expect(page.status).toBe(200);
      expectHeaders(page.headers);
      const html = await page.text();
      expect(inlineScripts(html)).toEqual([]);
      // Its own assets (it also names a web font stylesheet on https://fonts.googleapis.com).
      const assets = assetsOf(html, page.url).filter((asset) => asset.startsWith(app.url));
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) {
        const answer = await fetch(asset, { headers: { authorization } });
        expect([asset, answer.status]).toEqual([asset, 200]);
      }
      // Refused without a key, with the headers too.
      const refused = await fetch(`${app.url}/admin/queues`);
      expect(refused.status).toBe(401);
      expectHeaders(refused.headers);
    });

    it("a webhook's answers (accepted and refused) carry an API's headers: no resources, no framing, no sniffing", async () => {
      const { connectionId, secrets } = await app.createConnection({
        provider: "staticforms",
        inboundAuth: { type: "bearer" },
      });
      const deliver = (id: string) =>
        fetch(`${app.url}/webhooks/staticforms/${id}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${secrets.bearerToken}` },
          body: JSON.stringify(fixture("staticforms/form-submitted.json").json),
        });
      const accepted = await deliver(connectionId);
      const unknown = await deliver(randomUUID());
      expect([accepted.status, unknown.status]).toEqual([202, 404]);
      for (const { headers } of [accepted, unknown]) {
        expect(headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
        expect(headers.get("x-content-type-options")).toBe("nosniff");
        expect(headers.get("x-frame-options")).toBe("DENY");
      }
    });
  });

  describe("METRICS_TOKEN", () => {
    it("the API's /metrics answers 401 without or with a wrong token, 200 with it", async () => {
      const scrape = (authorization?: string) =>
        fetch(`${app.url}/metrics`, { headers: authorization ? { authorization } : {} });
      const none = await scrape();
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ error: "unauthorized" });
      expect((await scrape(`Bearer ${METRICS_TOKEN}x`)).status).toBe(401);
      expect((await scrape(`Basic ${METRICS_TOKEN}`)).status).toBe(401);
      const ok = await scrape(`Bearer ${METRICS_TOKEN}`);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("leadgate_deliveries_total");
    });

    it("the API's /metrics wants the token however its path is spelled", async () => {
      // The router decodes the path and takes an absolute URL: each of these reaches the metrics route.
      const encoded = await fetch(`${app.url}/%6detrics`);
      expect(encoded.status).toBe(401);
      expect(await encoded.json()).toMatchObject({ error: "unauthorized" });
      expect((await fetch(`${app.url}/metrics?format=text`)).status).toBe(401);
      for (const target of [`${app.url}/metrics`, "/metrics#x", "/%6Detrics?x=1"]) {
        const { socket, received, closed } = rawClient(app.url);
        socket.end(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
        await closed;
        expect(received()).toMatch(/^HTTP\/1\.1 401 /);
        expect(received()).not.toContain("leadgate_deliveries_total");
      }
      const allowed = await fetch(`${app.url}/%6detrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain("leadgate_deliveries_total");
    });

    it("the worker's metrics port listens on 127.0.0.1 only by default and wants the token too", async () => {
      const external = Object.values(networkInterfaces())
        .flat()
        .find((address) => address?.family === "IPv4" && !address.internal)?.address;
      expect(external).toBeDefined(); // the test needs an address other than loopback to prove the binding
      const port = await freePort();
      const worker = app.spawn("dist/worker.js", {
        METRICS_TOKEN,
        WORKER_METRICS_PORT: String(port),
        DISPATCHER_INTERVAL_MS: "60000",
      });
      await worker.waitFor(/worker started/);
      const scrape = (host: string, authorization?: string) =>
        fetch(`http://${host}:${port}/metrics`, { headers: authorization ? { authorization } : {} });
      expect((await scrape("127.0.0.1")).status).toBe(401);
      expect((await scrape("127.0.0.1", `Bearer wrong-${METRICS_TOKEN}`)).status).toBe(401);
      const ok = await scrape("127.0.0.1", `Bearer ${METRICS_TOKEN}`);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("leadgate_jobs_total");
      await expect(scrape(external!, `Bearer ${METRICS_TOKEN}`)).rejects.toThrow();

      // WORKER_METRICS_HOST opens it on purpose.
      const openPort = await freePort();
      const open = app.spawn("dist/worker.js", {
        METRICS_TOKEN,
        WORKER_METRICS_PORT: String(openPort),
        WORKER_METRICS_HOST: "0.0.0.0",
        DISPATCHER_INTERVAL_MS: "60000",
      });
      await open.waitFor(/worker started/);
      const reached = await fetch(`http://${external}:${openPort}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(reached.status).toBe(200);
    });
  });

  it.each([
    ["not listening", async () => ({ port: await freePort(), close: () => Promise.resolve() })],
    ["refusing every connection as starting up (57P03)", startingUpPostgres],
  ])(
    "the database %s: admin and console routes answer 503 unavailable with Retry-After, not 500",
    async (_case, database) => {
      const down = await database();
      const orphan = await app.startApi({
        DATABASE_URL: `postgresql://postgres@127.0.0.1:${down.port}/nowhere`,
      });
      try {
        const asOperator = { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" };
        const answers = [
          // The key's check, a model query.
          await fetch(`${orphan.url}/admin/connections`, { headers: asOperator }),
          await fetch(`${orphan.url}/admin/tenants`, {
            method: "POST",
            headers: asOperator,
            body: JSON.stringify({ name: "Nowhere" }),
          }),
          // The session's check, a raw query.
          await fetch(`${orphan.url}/admin/connections`, {
            headers: { cookie: "leadgate_session=a-session" },
          }),
          await fetch(`${orphan.url}/console/api/session`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: "someone@agency.example", password: "a-long-enough-password" }),
          }),
        ];
        for (const answer of answers) {
          expect([answer.status, ((await answer.json()) as { error: string }).error]).toEqual([
            503,
            "unavailable",
          ]);
          expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
        }
      } finally {
        await orphan.close();
        await down.close();
      }
    },
  );

  it("YELP_ALLOWED_IPS takes CIDRs: a sender inside a listed range passes, one outside is refused", async () => {
    const business = "cidrBiz_0123456789";
    const delivery = fixture("yelp/new-event.json").json as { data: Record<string, unknown> };
    const body = { ...delivery, data: { ...delivery.data, id: business } };
    const inside = await app.startApi({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_ALLOWED_IPS: "10.0.0.0/8, 127.0.0.0/8",
    });
    const outside = await app.startApi({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_ALLOWED_IPS: "10.0.0.0/8, 192.0.2.0/24, ::1/128",
    });
    await app.createConnection({
      provider: "yelp",
      externalAccountId: business,
      inboundAuth: { type: "none" },
    });
    expect((await post(`${inside.url}/webhooks/yelp/${YELP_TOKEN}`, body)).status).toBe(202);
    const refused = await post(`${outside.url}/webhooks/yelp/${YELP_TOKEN}`, body);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("unauthorized");
  });
});
