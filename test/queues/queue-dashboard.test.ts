// The queue dashboard (/admin/queues, bull-board) against cross-site requests. A
// browser that holds an operator's Basic credentials for the dashboard sends them with any request
// a hostile page makes it send, form posts included. So every change (any method but GET and HEAD)
// must come from PUBLIC_BASE_URL's origin, as its `Origin` header (or, without one, its `Referer`)
// says: anything else, or neither header, is `403 csrf_failed` and changes nothing. Reads are
// unaffected. Real HTTP requests, the headers a browser would send.
import { OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

const PUBLIC_ORIGIN = "https://leadgate.agency.example";
const basic = `Basic ${Buffer.from(`operator:${OPERATOR_KEY}`).toString("base64")}`;

describe("queue dashboard: changes only from Leadgate's own origin", () => {
  const app = useApp({
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, PUBLIC_BASE_URL: `${PUBLIC_ORIGIN}/` },
  });

  const dashboard = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${app.url}/admin/queues${path}`, {
      ...init,
      headers: { authorization: basic, ...init.headers },
    });
  interface QueueView {
    name: string;
    isPaused: boolean;
    counts: Record<string, number>;
  }
  const queues = async (): Promise<QueueView[]> => {
    const answer = await dashboard("/api/queues");
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { queues: QueueView[] }).queues;
  };
  const queue = async (name: string) => (await queues()).find((q) => q.name === name)!;
  const expectCsrfRefusal = async (answer: Response) => {
    expect(answer.status).toBe(403);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body).toEqual({ error: "csrf_failed", message: expect.any(String) });
  };
  let name: string;
  beforeAll(async () => {
    name = (await queues())[0]!.name;
  });

  it("a cross-site change (pause) is 403 csrf_failed and changes nothing; the same change from Leadgate's origin works", async () => {
    for (const origin of ["https://evil.example", "http://leadgate.agency.example", "null"]) {
      await expectCsrfRefusal(
        await dashboard(`/api/queues/${encodeURIComponent(name)}/pause`, {
          method: "PUT",
          headers: { origin },
        }),
      );
    }
    expect((await queue(name)).isPaused).toBe(false);

    const paused = await dashboard(`/api/queues/${encodeURIComponent(name)}/pause`, {
      method: "PUT",
      headers: { origin: PUBLIC_ORIGIN },
    });
    expect(paused.status).toBeLessThan(300);
    expect((await queue(name)).isPaused).toBe(true);
    const resumed = await dashboard(`/api/queues/${encodeURIComponent(name)}/resume`, {
      method: "PUT",
      headers: { referer: `${PUBLIC_ORIGIN}/admin/queues/queue/${name}` }, // no Origin: the Referer decides
    });
    expect(resumed.status).toBeLessThan(300);
    expect((await queue(name)).isPaused).toBe(false);
  });

  it("a cross-site form post (application/x-www-form-urlencoded) is 403 csrf_failed; no job is added", async () => {
    const before = (await queue(name)).counts;
    const form = await dashboard(`/api/queues/${encodeURIComponent(name)}/add`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: "name=evil&data=%7B%7D",
    });
    await expectCsrfRefusal(form);
    const json = await dashboard(`/api/queues/${encodeURIComponent(name)}/add`, {
      method: "POST",
      headers: { referer: "https://evil.example/page", "content-type": "application/json" },
      body: JSON.stringify({ name: "evil", data: {} }),
    });
    await expectCsrfRefusal(json);
    expect((await queue(name)).counts).toEqual(before);
  });

  it("a change with neither Origin nor Referer is refused; a Referer of another origin too", async () => {
    await expectCsrfRefusal(await dashboard("/api/queues/pause", { method: "PUT" }));
    await expectCsrfRefusal(
      await dashboard("/api/queues/pause", {
        method: "PUT",
        headers: { referer: "https://leadgate.agency.example.evil.example/admin/queues" },
      }),
    );
    expect((await queues()).every((q) => !q.isPaused)).toBe(true);
  });

  it("reads are unaffected by a cross-site Origin", async () => {
    const page = await dashboard("", { headers: { origin: "https://evil.example" } });
    expect(page.status).toBe(200);
    const api = await dashboard("/api/queues", { headers: { origin: "https://evil.example" } });
    expect(api.status).toBe(200);
    const head = await dashboard("", { method: "HEAD", headers: { origin: "https://evil.example" } });
    expect(head.status).toBe(200);
  });
});
