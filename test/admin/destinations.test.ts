// Design invariant 10: no request to where it must not go. A tenant-set CRM URL is checked when it
// is set (POST and PATCH /admin/connections: 400 destination_forbidden, nothing written; the answer
// says only that the destination is not allowed, the reason is logged for the operator) and again
// before each call (DNS may have changed: the job is dead with destination_forbidden, nothing sent);
// the call connects to the address that was checked. Host names resolve through a table of this
// file (the app's HostResolver), so no DNS is needed.
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { callCheckedDestination } from "../../src/common/outbound/destination.js";
import { HostResolver, type ResolvedAddress } from "../../src/common/outbound/destination-guard.js";
import { RedactingLogger } from "../../src/observability/logger.js";
import { createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const PUBLIC = "93.184.215.14";

/** What each test host resolves to; a host missing here does not exist, "hang" never answers. */
const hosts = new Map<string, string[] | "hang">([
  ["crm.example.com", [PUBLIC]],
  ["localhost", ["127.0.0.1"]],
  ["internal.example.com", ["127.0.0.1"]],
  ["postgres", ["172.18.0.2"]], // a compose service name
  ["metadata.example.com", ["169.254.169.254"]],
  ["mixed.example.com", [PUBLIC, "10.0.0.5"]], // every address is checked
  ["mapped.example.com", ["::ffff:127.0.0.1"]],
  ["hang.example.com", "hang"],
]);

// The resolver of every app this file starts (API and worker) answers from the table.
const systemLookup = HostResolver.prototype.lookup;
beforeAll(() => {
  HostResolver.prototype.lookup = (hostname: string) => {
    const entry = hosts.get(hostname);
    if (entry === "hang") return new Promise<ResolvedAddress[]>(() => undefined);
    if (entry === undefined) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));
    return Promise.resolve(entry.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
  };
});
afterAll(() => {
  HostResolver.prototype.lookup = systemLookup;
});

/** The forms a CRM URL may not take with the default settings (https only, no private ranges). */
const FORBIDDEN = [
  ["plain http", "http://crm.example.com/hook"],
  ["user and password", "https://user:pass@crm.example.com/hook"],
  ["a user", "https://deploy@crm.example.com/hook"],
  ["a private address (Docker API)", "https://10.0.0.5:2375/containers/json"],
  ["the cloud metadata address", "https://169.254.169.254/latest/meta-data/"],
  ["a host resolving to link-local", "https://metadata.example.com/"],
  ["localhost (Postgres port)", "https://localhost:5432/"],
  ["a compose service name", "https://postgres:5432/"],
  ["IPv6 loopback", "https://[::1]/hook"],
  ["IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/hook"],
  ["a host resolving to IPv4-mapped loopback", "https://mapped.example.com/hook"],
  ["the unspecified address", "https://0.0.0.0/hook"],
  ["CGNAT", "https://100.64.0.1/hook"],
  ["ULA", "https://[fd00::1]/hook"],
  ["IPv6 link-local", "https://[fe80::1]/hook"],
  ["IPv4 multicast", "https://224.0.0.1/hook"],
  ["IPv6 multicast", "https://[ff02::1]/hook"],
  ["a host with one private address among public ones", "https://mixed.example.com/hook"],
  ["a host that does not resolve", "https://nowhere.example.com/hook"],
] as const;

/** The production JSON logger (redaction included), writing into memory. */
class CapturingLogger extends RedactingLogger {
  readonly lines: string[] = [];
  protected override emit(messages: unknown[], context?: string, logLevel?: string): void {
    this.lines.push(JSON.stringify({ messages, context, logLevel }));
  }
}

describe("outbound destinations: refused when set", () => {
  const logger = new CapturingLogger();
  const app = useApp({
    logger,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      DESTINATION_ALLOW_HTTP: "false",
      DESTINATION_ALLOW_CIDRS: "",
    },
  });
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let connectionId: string;

  const create = (url: string) =>
    tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${Math.random().toString(36).slice(2)}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url } },
    });
  const connectionCount = async () =>
    (
      await app.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM connections WHERE tenant_id = $1", [
        tenant.tenantId,
      ])
    ).rows[0]!.n;
  const storedRow = async () =>
    (await app.sql.query("SELECT * FROM connections WHERE id = $1", [connectionId])).rows[0] as unknown;
  const auditCount = async () =>
    (
      await app.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1",
        [tenant.tenantId],
      )
    ).rows[0]!.n;

  beforeAll(async () => {
    tenant = await createTenant(app.url);
    const created = await create("https://crm.example.com/hook");
    expect(created.status).toBe(201);
    connectionId = created.body.connection.id;
  });

  it("accepts a public https destination (POST and PATCH)", async () => {
    const created = await create("https://crm.example.com/other");
    expect(created.status).toBe(201);
    expect(created.body.secrets.crmSigningSecret).toMatch(/^whsec_/);
    const patched = await tenant.admin.patch(`/admin/connections/${created.body.connection.id}`, {
      settings: { crmDestination: { url: "https://crm.example.com/patched" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.connection.settings.crmDestination.url).toBe("https://crm.example.com/patched");
  });

  it.each(FORBIDDEN)("POST refuses %s: 400 destination_forbidden, nothing written", async (_what, url) => {
    const [connections, audit] = [await connectionCount(), await auditCount()];
    const answer = await create(url);
    expect([answer.status, answer.body.error]).toEqual([400, "destination_forbidden"]);
    expect(answer.body.message).toEqual(expect.any(String));
    expect(answer.text).not.toContain("whsec_");
    expect([await connectionCount(), await auditCount()]).toEqual([connections, audit]);
  });

  it.each(FORBIDDEN)("PATCH refuses %s: 400 destination_forbidden, the row unchanged", async (_what, url) => {
    const [before, audit] = [await storedRow(), await auditCount()];
    const answer = await tenant.admin.patch(`/admin/connections/${connectionId}`, {
      displayName: "Renamed",
      settings: { crmDestination: { url } },
    });
    expect([answer.status, answer.body.error]).toEqual([400, "destination_forbidden"]);
    expect([await storedRow(), await auditCount()]).toEqual([before, audit]);
  });

  it("says only that the destination is not allowed, the same for every rule (no DNS oracle); the reason goes to a warn log line", async () => {
    const refusals = {
      "not https": "http://crm.example.com/hook",
      credentials: "https://user:s3cret-pass@crm.example.com/hook?token=query-secret",
      "non-public address": "https://internal.example.com/hook",
      "does not resolve": "https://nowhere.example.com/hook",
      "private literal": "https://10.0.0.5:2375/containers/json",
    };
    const messages = await Promise.all(
      Object.values(refusals).map(async (url) => {
        const answer = await create(url);
        expect([answer.status, answer.body.error]).toEqual([400, "destination_forbidden"]);
        expect(Object.keys(answer.body as object).sort()).toEqual(["error", "message"]);
        return answer.body.message as string;
      }),
    );
    // One message for all: whether a name resolves, and to what kind of address, is not told.
    expect(new Set(messages).size).toBe(1);
    expect(messages[0]).toContain("settings.crmDestination.url");
    for (const leak of [
      "127.0.0.1",
      "10.0.0.5",
      "internal.example",
      "non-public",
      "resolve",
      "loopback",
      "s3cret",
    ]) {
      expect(messages[0]).not.toContain(leak);
    }
    // The operator learns why from the logs, at warn level, without the URL's secrets.
    const refused = logger.lines.filter(
      (line) => line.includes("destination refused") && line.includes('"logLevel":"warn"'),
    );
    const logged = refused.join("\n");
    expect(logged).toContain("internal.example.com");
    expect(logged).toContain("loopback");
    expect(logged).toContain("nowhere.example.com");
    expect(logged).toContain("does not resolve");
    expect(logged).toContain("credentials in the URL");
    for (const secret of ["s3cret-pass", "query-secret", "/hook"]) expect(logged).not.toContain(secret);
  });

  it("refuses a host whose resolver never answers, after 2 s", async () => {
    const before = await storedRow();
    const started = Date.now();
    const answer = await tenant.admin.patch(`/admin/connections/${connectionId}`, {
      settings: { crmDestination: { url: "https://hang.example.com/hook" } },
    });
    const elapsed = Date.now() - started;
    expect([answer.status, answer.body.error]).toEqual([400, "destination_forbidden"]);
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(5_000);
    expect(await storedRow()).toEqual(before);
  });

  it("refuses decimal and hex spellings of loopback before anything is written", async () => {
    // The URL syntax check (400 validation_failed) refuses them first; the destination check would
    // see 127.0.0.1 (the WHATWG parser normalises them: see destination-policy.spec.ts).
    for (const url of ["https://2130706433/hook", "https://0x7f.1/hook", "https://0177.0.0.1/hook"]) {
      const [connections, before] = [await connectionCount(), await storedRow()];
      const created = await create(url);
      const patched = await tenant.admin.patch(`/admin/connections/${connectionId}`, {
        settings: { crmDestination: { url } },
      });
      expect([url, created.status, patched.status]).toEqual([url, 400, 400]);
      expect([await connectionCount(), await storedRow()]).toEqual([connections, before]);
    }
  });
});

describe("outbound destinations: an allowed CIDR, and a check at call time", () => {
  // The CRM that must never be reached: it listens on 127.0.0.1, outside the allowed CIDR.
  const forbiddenCrm = useFakeServer({ status: 200, body: {} });
  /** A LAN CRM on 127.0.0.2, inside DESTINATION_ALLOW_CIDRS. */
  const lanCrm = { port: 0, received: [] as { path: string; headers: IncomingHttpHeaders; body: string }[] };
  const lanServer = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      lanCrm.received.push({ path: request.url ?? "", headers: request.headers, body });
      response.writeHead(200).end("{}");
    });
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => lanServer.listen(0, "127.0.0.2", resolve));
    lanCrm.port = (lanServer.address() as { port: number }).port;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        lanServer.closeAllConnections();
        lanServer.close(() => resolve());
      }),
  );

  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      DESTINATION_ALLOW_HTTP: "true",
      DESTINATION_ALLOW_CIDRS: "127.0.0.2/32",
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    },
  });
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });

  const connect = async (url: string) => {
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${Math.random().toString(36).slice(2)}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url } },
    });
    expect(created.status).toBe(201);
    return { id: created.body.connection.id as string, token: created.body.secrets.bearerToken as string };
  };
  const deliver = async (connection: { id: string; token: string }) => {
    const answer = await post(`${app.url}/webhooks/staticforms/${connection.id}`, staticFormsDelivery(), {
      authorization: `Bearer ${connection.token}`,
    });
    expect(answer.status).toBe(202);
  };
  const crmJob = (connectionId: string) =>
    app.sql
      .query<{ id: string; status: string; last_error_code: string | null }>(
        "SELECT id, status, last_error_code FROM jobs WHERE connection_id = $1 AND operation = 'crm-delivery'",
        [connectionId],
      )
      .then((result) => result.rows[0]);

  it("delivers to a host that resolves inside DESTINATION_ALLOW_CIDRS, at the checked address, Host naming the host", async () => {
    hosts.set("crm.lan", ["127.0.0.2"]); // unknown to the system resolver: only the checked address can be reached
    const connection = await connect(`http://crm.lan:${lanCrm.port}/hooks/leadgate`);
    await deliver(connection);
    await waitFor(
      () => crmJob(connection.id),
      (job) => job?.status === "succeeded",
    );
    expect(lanCrm.received).toHaveLength(1);
    expect(lanCrm.received[0]).toMatchObject({
      path: "/hooks/leadgate",
      headers: { host: `crm.lan:${lanCrm.port}`, "webhook-id": expect.any(String) },
    });
    expect(JSON.parse(lanCrm.received[0]!.body)).toMatchObject({ data: { connectionId: connection.id } });
  });

  it("refuses loopback outside the allowed CIDR when set", async () => {
    const answer = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-loopback",
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${forbiddenCrm.url}/crm` } },
    });
    expect([answer.status, answer.body.error]).toEqual([400, "destination_forbidden"]);
  });

  it("a host that stops resolving is retried (network), and delivered once it resolves again", async () => {
    hosts.set("flaky.lan", ["127.0.0.2"]);
    const connection = await connect(`http://flaky.lan:${lanCrm.port}/flaky`);
    hosts.delete("flaky.lan");
    await deliver(connection);
    await waitFor(
      () => crmJob(connection.id),
      (job) => job?.status === "retrying" && job.last_error_code === "network",
    );
    hosts.set("flaky.lan", ["127.0.0.2"]);
    await waitFor(
      () => crmJob(connection.id),
      (job) => job?.status === "succeeded",
    );
    expect(lanCrm.received.filter((request) => request.path === "/flaky")).toHaveLength(1);
  });

  it("a host that resolved to a public address when set and to 127.0.0.1 when called: dead with destination_forbidden, nothing sent", async () => {
    const port = new URL(forbiddenCrm.url).port;
    hosts.set("rebind.example.com", [PUBLIC]);
    const connection = await connect(`http://rebind.example.com:${port}/crm`);
    hosts.set("rebind.example.com", ["127.0.0.1"]);
    await deliver(connection);
    const job = await waitFor(
      () => crmJob(connection.id),
      (found) => found?.status === "dead",
    );
    expect(job).toMatchObject({ status: "dead", last_error_code: "destination_forbidden" });
    const view = await tenant.admin.get(`/admin/jobs/${job!.id}`);
    expect(view.body).toMatchObject({
      status: "dead",
      lastErrorCode: "destination_forbidden",
      attemptHistory: [{ outcome: "permanent", errorCode: "destination_forbidden" }],
    });
    await app.settled();
    expect(forbiddenCrm.received).toEqual([]);
  });
});

describe("outbound destinations: TLS at a pinned address", () => {
  // A self-signed certificate for crm.test (test only; made with
  // `openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=crm.test -addext subjectAltName=DNS:crm.test`).
  const tls = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
  const serverNames: string[] = [];
  const requests: string[] = [];
  const server = createTlsServer(
    {
      key: tls("crm.test.key"),
      cert: tls("crm.test.crt"),
      SNICallback: (name, done) => {
        serverNames.push(name);
        done(null);
      },
    },
    (request, response) => {
      requests.push(request.headers.host ?? "");
      response.end();
    },
  );
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("names the URL's host in SNI, and refuses a certificate the system does not trust", async () => {
    const port = (server.address() as { port: number }).port;
    const call = callCheckedDestination(
      { url: new URL(`https://crm.test:${port}/hook`), address: "127.0.0.1", family: 4 },
      { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
      5_000,
    );
    await expect(call).rejects.toMatchObject({ code: "network" });
    expect(serverNames).toEqual(["crm.test"]); // crm.test is in no DNS: the pinned address was used
    expect(requests).toEqual([]);
  });
});
