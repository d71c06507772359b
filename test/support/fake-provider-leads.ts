// Stateful fake provider APIs on loopback (real HTTP servers, see fake-server.ts) for reconciliation
// and backfill: a fake Yelp that lists each business's leads and serves their events, and a fake
// Thumbtack that lists each business's negotiations (or answers 404 for the assumed endpoint).
import type { FakeReply, FakeServer, ReceivedRequest } from "./fake-server.js";
import { fakeServer, useFakeServer } from "./harness.js";

export interface FakeYelpEvent {
  id: string;
  cursor: string;
  event_type: string;
  user_type: string;
  user_display_name: string;
  event_content: { text: string };
  time_created: string;
}

export interface FakeYelpLead {
  id: string;
  events: FakeYelpEvent[];
}

/** A consumer's first message `minutesAgo` before now, as Yelp lists it. */
export function yelpLead(id: string, minutesAgo: number): FakeYelpLead {
  return {
    id,
    events: [
      {
        id: `${id}_ev1`,
        cursor: `${id}_cur1`,
        event_type: "TEXT",
        user_type: "CONSUMER",
        user_display_name: "Marta K.",
        event_content: { text: `Hello from ${id}` },
        time_created: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
      },
    ],
  };
}

/** The NEW_EVENT webhook body Yelp sends for a lead's event. */
export function yelpWebhook(business: string, lead: FakeYelpLead, event = lead.events[0]!) {
  return {
    time: new Date().toISOString(),
    object: "business",
    data: {
      id: business,
      updates: [
        {
          event_type: "NEW_EVENT",
          event_id: event.id,
          lead_id: lead.id,
          interaction_time: event.time_created,
        },
      ],
    },
  };
}

export interface FakeYelp {
  readonly server: FakeServer;
  readonly url: string;
  readonly received: ReceivedRequest[];
  /** Each business's leads, newest first (what `lead_ids` lists). */
  readonly leads: Map<string, FakeYelpLead[]>;
  /** Businesses whose lead-id list answers 500. */
  readonly failing: Set<string>;
  /** Businesses whose lead-id list answers after this many ms (each page). */
  readonly slow: Map<string, number>;
  /** Replies posted to a lead (`POST /v3/leads/{id}/events`). */
  repliesTo(leadId: string): ReceivedRequest[];
  /** Requests to a business's lead-id list. */
  listCalls(business: string): ReceivedRequest[];
}

function yelpRoute(
  leads: Map<string, FakeYelpLead[]>,
  failing: Set<string>,
  slow: Map<string, number>,
  delayMs: number,
) {
  const find = (leadId: string) => [...leads.values()].flat().find((lead) => lead.id === leadId);
  return (request: ReceivedRequest): FakeReply | undefined => {
    const url = new URL(request.path, "http://fake");
    const list = /^\/v3\/businesses\/([^/]+)\/lead_ids$/.exec(url.pathname);
    if (list && request.method === "GET") {
      const business = decodeURIComponent(list[1]!);
      if (failing.has(business)) return { status: 500, body: {} };
      const all = leads.get(business) ?? [];
      const offset = Number(url.searchParams.get("offset") ?? "0");
      const page = all.slice(offset, offset + 10);
      return {
        status: 200,
        body: { lead_ids: page.map((lead) => lead.id), has_more: offset + 10 < all.length },
        delayMs: slow.get(business) ?? delayMs,
      };
    }
    const match = /^\/v3\/leads\/([^/]+)(\/events)?$/.exec(url.pathname);
    if (!match) return undefined;
    const lead = find(decodeURIComponent(match[1]!));
    if (!lead) return { status: 404, body: { error: { id: "NOT_FOUND" } } };
    if (request.method === "POST" && match[2]) return { status: 201, body: {} };
    if (request.method !== "GET") return undefined;
    if (!match[2]) {
      return {
        status: 200,
        body: {
          id: lead.id,
          user: { display_name: "Marta K." },
          time_created: lead.events[0]?.time_created ?? null,
          last_event_time: lead.events.at(-1)?.time_created ?? null,
        },
      };
    }
    return { status: 200, body: { events: lead.events.slice(-20) } };
  };
}

function fakeYelpOf(
  started: () => FakeServer,
  leads: Map<string, FakeYelpLead[]>,
  failing: Set<string>,
  slow: Map<string, number>,
): FakeYelp {
  return {
    get server() {
      return started();
    },
    get url() {
      return started().url;
    },
    get received() {
      return started().received;
    },
    leads,
    failing,
    slow,
    repliesTo: (leadId) =>
      started().received.filter(
        (request) => request.method === "POST" && request.path === `/v3/leads/${leadId}/events`,
      ),
    listCalls: (business) =>
      started().received.filter((request) => request.path.startsWith(`/v3/businesses/${business}/lead_ids`)),
  };
}

/** A fake Yelp started in beforeAll (declare before useApp); `delayMs` slows the lead-id list. */
export function useFakeYelp(delayMs = 0): FakeYelp {
  const leads = new Map<string, FakeYelpLead[]>();
  const failing = new Set<string>();
  const slow = new Map<string, number>();
  const server = useFakeServer({ status: 404, body: {} }, yelpRoute(leads, failing, slow, delayMs));
  return fakeYelpOf(() => server, leads, failing, slow);
}

/** A fake Yelp started now (in a test or hook). */
export async function startFakeYelp(delayMs = 0): Promise<FakeYelp> {
  const leads = new Map<string, FakeYelpLead[]>();
  const failing = new Set<string>();
  const slow = new Map<string, number>();
  const server = await fakeServer({ status: 404, body: {} }, yelpRoute(leads, failing, slow, delayMs));
  return fakeYelpOf(() => server, leads, failing, slow);
}

/** A NegotiationCreatedV4 webhook's `data`, created `minutesAgo` before now. */
export function thumbtackNegotiation(negotiationId: string, business: string, minutesAgo: number) {
  return {
    negotiationID: negotiationId,
    createdAt: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
    status: "Open",
    customer: {
      customerID: `cust-${negotiationId}`,
      firstName: "Priya",
      lastName: "Okafor",
      phone: "2065550117",
    },
    business: { businessID: business, name: "Evergreen Deck & Fence" },
    request: { description: "Two panels blew down in the storm." },
  };
}

export interface FakeThumbtack {
  readonly url: string;
  readonly received: ReceivedRequest[];
  /** Each business's negotiations, newest first; a business absent here answers 404 (no such endpoint). */
  readonly negotiations: Map<string, Record<string, unknown>[]>;
}

/** A fake Thumbtack started in beforeAll (declare before useApp). */
export function useFakeThumbtack(): FakeThumbtack {
  const negotiations = new Map<string, Record<string, unknown>[]>();
  const server = useFakeServer({ status: 404, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    const list = /^\/api\/v4\/businesses\/([^/]+)\/negotiations$/.exec(url.pathname);
    if (list && request.method === "GET") {
      const items = negotiations.get(decodeURIComponent(list[1]!));
      return items ? { status: 200, body: { negotiations: items } } : { status: 404, body: {} };
    }
    if (/^\/api\/v4\/negotiations\/[^/]+\/messages/.test(url.pathname)) {
      return request.method === "GET" ? { status: 200, body: { messages: [] } } : { status: 201, body: {} };
    }
    return undefined;
  });
  return {
    get url() {
      return server.url;
    },
    get received() {
      return server.received;
    },
    negotiations,
  };
}
