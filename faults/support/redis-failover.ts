// A Redis master killed under a steady load, for any topology that promotes a replica (Sentinel,
// Cluster): Leadgate's API and worker on the topology, 500 Thumbtack deliveries at about 40/s, the
// master killed with SIGKILL after the 120th answer, the provider's retries until every delivery
// has a 2xx, then the counts. Each answer is labelled with the phase it was sent in: "before",
// "failing over" (until the topology names the promoted replica) or "after".
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { FakeServer } from "../../test/support/fake-server.js";
import { waitFor } from "../../test/support/wait.js";
import { Leadgate, type Services } from "./cluster.js";
import { type Attempt, isSuccess, type Outcome, retryUntilAccepted, sendAll } from "./load.js";
import { thumbtackDeliveries } from "./thumbtack-load.js";
import { count, type Counts, report } from "./verify.js";

export const EVENTS = 500;
/** The master is killed after this many answers (a few seconds into the load). */
const KILL_AFTER = 120;

/** What the scenario needs of a topology. */
export interface Topology {
  /** Leadgate's Redis variables for it (REDIS_PREFIX is the scenario's). */
  env: Record<string, string>;
  killMaster(): Promise<void>;
  /** Whether the topology serves the killed master's keys from the promoted replica yet. */
  promoted(): Promise<boolean>;
  /** When Leadgate first wrote to a queue (its event stream) on the promoted master after `since` (ms). */
  firstQueueWrite(prefix: string, since: number): Promise<number>;
}

export interface FailoverResult {
  counts: Counts;
  attempts: Attempt[];
  /** From the kill, in ms: to the promotion seen, to Leadgate's first queue write on the new master. */
  promotedMs: number;
  firstQueueWriteMs: number;
  apiUrl: string;
}

const tally = (list: { status: number }[]) =>
  Object.entries(
    list.reduce<Record<number, number>>(
      (all, { status }) => ({ ...all, [status]: (all[status] ?? 0) + 1 }),
      {},
    ),
  )
    .map(([status, n]) => `${status}x${n}`)
    .join(",") || "none";

/** Runs the scenario on `topology` (`lg` is set for the caller's afterAll) and prints its figures. */
export async function killMasterUnderLoad(
  name: string,
  services: Services,
  sql: pg.Pool,
  databaseUrl: string,
  topology: (prefix: string) => Topology,
  fakes: { thumbtack: FakeServer; crm: FakeServer },
  started: (lg: Leadgate) => void,
): Promise<FailoverResult> {
  const prefix = `faults-${randomBytes(3).toString("hex")}`;
  const redis = topology(prefix);
  const lg = new Leadgate(services, databaseUrl, {
    // Through the topology only: REDIS_URL's host is ignored (nothing listens there).
    REDIS_URL: "redis://redis-url-host-is-ignored.invalid:1/0",
    ...redis.env,
    REDIS_PREFIX: prefix,
    // Every job through BullMQ (none run by the listening worker at once): the scenario times when
    // Leadgate's queues write on the new master.
    DISPATCHER_RUNS_JOBS: "false",
    THUMBTACK_API_BASE_URL: fakes.thumbtack.url,
    RECONCILE_INTERVAL_SECONDS: String(7 * 86_400),
  });
  started(lg);
  const api = await lg.startApi();
  await lg.startWorker();
  const deliveries = await thumbtackDeliveries(api.url, fakes.crm.url, EVENTS);
  const outcomes = new Map<string, Outcome>();

  let phase = "before";
  let killedAt = 0;
  let promotedAt = 0;
  const watchPromotion = async () => {
    while (!(await redis.promoted().catch(() => false))) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    promotedAt = Date.now();
    phase = "after";
  };
  let promotion: Promise<void> | undefined;
  await sendAll(
    deliveries,
    () => [api.url],
    4,
    outcomes,
    async (sent) => {
      if (sent === KILL_AFTER) {
        await redis.killMaster();
        killedAt = Date.now();
        phase = "failing over";
        promotion = watchPromotion();
      }
      await new Promise((resolve) => setTimeout(resolve, 80)); // a steady ~40 deliveries/s
    },
    () => phase,
  );
  await promotion;
  await retryUntilAccepted(deliveries, () => [api.url], outcomes);

  const jobs = () =>
    sql.query<{ done: number; all: number }>(
      "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done, count(*)::int AS all FROM jobs",
    );
  await waitFor(
    async () => (await jobs()).rows[0]!,
    (row) => row.all === EVENTS * 3 && row.done === row.all,
    60_000,
  ).catch(() => undefined); // counted below as lost
  const counts = await count(sql, deliveries, outcomes, fakes.thumbtack, fakes.crm);
  const firstQueueWrite = await redis.firstQueueWrite(prefix, killedAt);

  const attempts = [...outcomes.values()].flatMap((outcome) => outcome.attempts);
  const inPhase = (label: string) => attempts.filter((attempt) => attempt.phase === label);
  report(name, counts, {
    accepted2xx: attempts.filter((attempt) => isSuccess(attempt.status)).length,
    refused503: attempts.filter((attempt) => attempt.status === 503).length,
    promotedSeconds: ((promotedAt - killedAt) / 1000).toFixed(1),
    failoverSeconds: ((firstQueueWrite - killedAt) / 1000).toFixed(1),
    failingOverAnswers: tally(inPhase("failing over")),
    afterAnswers: tally(inPhase("after")),
    retries: tally(inPhase("retries")),
  });
  return {
    counts,
    attempts,
    promotedMs: promotedAt - killedAt,
    firstQueueWriteMs: firstQueueWrite - killedAt,
    apiUrl: api.url,
  };
}

/** What every topology must show: nothing lost or repeated, only 2xx or a 503 with Retry-After while failing over. */
export async function expectFollowed(result: FailoverResult, withinMs: number): Promise<void> {
  expect(result.firstQueueWriteMs).toBeLessThan(withinMs); // Leadgate's queues work on the new master soon after
  expect((await fetch(`${result.apiUrl}/health/ready`)).status).toBe(200); // the API's own client too
  const failingOver = result.attempts.filter((attempt) => attempt.phase === "failing over");
  expect(failingOver.length).toBeGreaterThan(0);
  expect(result.attempts.filter((a) => !isSuccess(a.status) && a.status !== 503)).toEqual([]);
  expect(
    result.attempts.filter((a) => a.status === 503 && (a.phase !== "failing over" || !a.retryAfter)),
  ).toEqual([]);
  expect(result.counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: EVENTS, stored: EVENTS });
}
