import { createServer, type IncomingHttpHeaders, type Server } from "node:http";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface FakeReply {
  status: number;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is instead of `body` (it need not be JSON: a provider answering garbage). */
  text?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (to provoke client timeouts). */
  delayMs?: number;
  /** Answer only once this settles (then after `delayMs`): a call held until the test lets it go. */
  until?: Promise<unknown>;
}

export interface FakeServer {
  url: string;
  /** Every request received, in order. */
  received: ReceivedRequest[];
  /** The most requests it held at once, unanswered (a destination's concurrency cap). */
  readonly mostInFlight: number;
  /** Sets the answers: a queue consumed one per request, then the fallback answer for the rest. */
  reply(...replies: FakeReply[]): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server on loopback standing in for a provider API or an agency's CRM: it records what
 * it receives and answers as told: scripted replies first, then `route`, then the fallback (200 `{}`).
 */
export async function startFakeServer(
  fallback: FakeReply = { status: 200, body: {} },
  route?: (request: ReceivedRequest) => FakeReply | undefined,
): Promise<FakeServer> {
  const received: ReceivedRequest[] = [];
  let queue: FakeReply[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  /** Delayed replies not sent yet: cleared on close, so a long delay does not outlive the test. */
  const pending = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const entry = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      received.push(entry);
      const reply = queue.shift() ?? route?.(entry) ?? fallback;
      const answer = () => {
        const timer = setTimeout(() => {
          pending.delete(timer);
          inFlight -= 1;
          response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
          response.end(reply.text ?? (reply.body === undefined ? "" : JSON.stringify(reply.body)));
        }, reply.delayMs ?? 0);
        pending.add(timer);
      };
      if (reply.until) void reply.until.finally(answer).catch(() => undefined);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    received,
    get mostInFlight() {
      return mostInFlight;
    },
    reply: (...replies) => {
      queue = replies;
    },
    close: () =>
      new Promise((resolve) => {
        for (const timer of pending) clearTimeout(timer);
        pending.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
