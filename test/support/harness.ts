// The one fixture integration tests start the app with. `useApp` registers the beforeAll/afterAll
// of its describe block: a database cloned for this file, the app's config (built by the real
// parser from env vars, with a Redis key prefix of the file's own), the real API on a loopback port
// and, if asked, the real worker in this process. Everything started through it (more APIs and
// workers, child processes) is closed at the end, then the database dropped. Fake servers
// (`useFakeServer`, `fakeServer`) close after everything else in the file.
import type { INestApplicationContext, LoggerService } from "@nestjs/common";
import { Queue } from "bullmq";
import type pg from "pg";
import type { AppConfig } from "../../src/config/config.js";
import type { NewConnection } from "../../src/connections/lifecycle/connection.js";
import { Dispatcher } from "../../src/jobs/dispatcher.js";
import { OPERATIONS } from "../../src/jobs/operations.js";
import { type QueueName, queuePrefix } from "../../src/queues/queue-names.js";
import { ReplayBatchWorker } from "../../src/replay/replay-batch.worker.js";
import { REPLAY_QUEUE } from "../../src/replay/replay-queue.js";
import { type Admin, adminAs, OPERATOR_KEY } from "./admin.js";
import {
  type RunningApi,
  startApi,
  startWorker,
  TEST_DESTINATION_ENV,
  TEST_ENCRYPTION_KEY,
  testConfig,
  testRedisPrefix,
} from "./app.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { type FakeReply, type FakeServer, type ReceivedRequest, startFakeServer } from "./fake-server.js";
import { type Spawned, spawnNode } from "./process.js";
import { testRedis, testRedisEnv } from "./redis.js";
import { createTenantWithConnection, type TestConnection } from "./tenants.js";
import { waitFor } from "./wait.js";

/** How long settled() waits for the queues to drain. */
const SETTLE_MS = 15_000;

type Env = Record<string, string>;

export interface AppOptions {
  /**
   * Env vars of the app's config, as in production. A function is called in beforeAll, after the
   * fake servers declared before `useApp` have started (to name their URLs).
   */
  env?: Env | (() => Env);
  /** Start the API (default true). Without it the fixture gives the database, config and env only. */
  api?: boolean;
  /** Start the worker in this process: processors, dispatcher, retention (default false). */
  worker?: boolean;
  /** The API's logger (default: none). */
  logger?: LoggerService;
}

export interface TestApp {
  /** This file's database; `db.sql` is a plain pg pool for reading the truth. */
  readonly db: TestDatabase;
  /** Shorthand for `db.sql`. */
  readonly sql: pg.Pool;
  /** The config the API and worker run with. */
  readonly config: AppConfig;
  /**
   * That config's env vars (DATABASE_URL, encryption key, Redis prefix, TEST_DESTINATION_ENV,
   * options.env): for child processes.
   */
  readonly env: Env;
  readonly api: RunningApi;
  /** The API's base URL (`http://127.0.0.1:<port>`). */
  readonly url: string;
  readonly worker: INestApplicationContext;
  /** An admin client with the bootstrap operator key (start the app with `LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY`). */
  readonly operator: Admin;
  /** A tenant of the test's own with one connection, created through the real service. */
  createConnection(
    connection: Partial<NewConnection> & Pick<NewConnection, "provider" | "inboundAuth">,
  ): Promise<TestConnection>;
  /** Another API on the same database and queues (a replica); `env` overrides the file's. Closed at the end. */
  startApi(env?: Env): Promise<RunningApi>;
  /** Another worker on the same database and queues; closed at the end. */
  startWorker(env?: Env): Promise<INestApplicationContext>;
  /** A compiled entry point (dist/) as a child process with this app's env plus `env`; stopped at the end. */
  spawn(script: string, env?: Env): Spawned;
  /**
   * Runs `close` at the end, before the app and its database go (the last deferred first). For what
   * a test file starts itself: its own afterAll would run after the fixture's.
   */
  defer(close: () => Promise<void>): void;
  /**
   * Resolves once nothing more can happen to the jobs as they stand: one dispatcher and one replay-recovery pass (what the
   * worker's timer does every DISPATCHER_INTERVAL_MS, so anything due or released is handed over),
   * then no BullMQ job waiting, running or delayed in this app's queues (a delayed copy of a job
   * whose row is finished does not count: it can change nothing; nor does one of a waiting job due
   * after this wait ends). Wait for the outcome you
   * expect first (a job's terminal state), then call this before asserting that something did not
   * happen. Needs `worker: true`.
   */
  settled(): Promise<void>;
}

/** Starts the app for the tests of the enclosing describe block (see the top of this file). */
export function useApp(options: AppOptions = {}): TestApp {
  let db: TestDatabase | undefined;
  let env: Env | undefined;
  let config: AppConfig | undefined;
  let api: RunningApi | undefined;
  let worker: INestApplicationContext | undefined;
  const closers: (() => Promise<void>)[] = [];

  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) {
      throw new Error(`app.${name} is not there: use it in a test or a hook declared after useApp()`);
    }
    return value;
  };
  const configWith = (extra: Env = {}) => testConfig(ready(db, "db").url, { ...ready(env, "env"), ...extra });
  /** Closed at the end unless the test closed it first: its close() runs once either way. */
  const tracked = <T extends { close(): Promise<void> }>(started: T): T => {
    let closed = false;
    const close = started.close.bind(started);
    const once = async () => {
      if (closed) return;
      closed = true;
      await close();
    };
    started.close = once;
    closers.push(once);
    return started;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      DATABASE_URL: db.url,
      LEADGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      REDIS_PREFIX: testRedisPrefix(),
      ...testRedisEnv(),
      ...TEST_DESTINATION_ENV,
      // The longest schedule: a test's worker makes no reconciliation job (with Yelp and Thumbtack calls)
      // of its own unless the test asks for one (a connection's offset in 900 s could fall in a test).
      RECONCILE_INTERVAL_SECONDS: String(7 * 86_400),
      ...(typeof options.env === "function" ? options.env() : options.env),
    };
    config = configWith();
    if (options.api !== false) api = await startApi(config, options.logger);
    if (options.worker) worker = await startWorker(config);
  });

  afterAll(async () => {
    try {
      for (const close of closers.reverse()) await close();
      await worker?.close();
      await api?.close();
    } finally {
      await db?.drop();
    }
  });

  const app: TestApp = {
    get db() {
      return ready(db, "db");
    },
    get sql() {
      return ready(db, "db").sql;
    },
    get config() {
      return ready(config, "config");
    },
    get env() {
      return ready(env, "env");
    },
    get api() {
      return ready(api, "api");
    },
    get url() {
      return ready(api, "api").url;
    },
    get worker() {
      return ready(worker, "worker");
    },
    get operator() {
      return adminAs(ready(api, "api").url, OPERATOR_KEY);
    },
    createConnection: (connection) => createTenantWithConnection(app.api.app, connection),
    startApi: async (extra) => tracked(await startApi(configWith(extra))),
    startWorker: async (extra) => tracked(await startWorker(configWith(extra))),
    spawn(script, extra = {}) {
      const child = spawnNode(script, { ...app.env, ...extra });
      closers.push(async () => {
        if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill("SIGTERM");
        await child.exited;
      });
      return child;
    },
    defer(close) {
      closers.push(close);
    },
    async settled() {
      await app.worker.get(Dispatcher).tick();
      await app.worker.get(ReplayBatchWorker).recover();
      const redis = testRedis(app.config);
      const queues = [...OPERATIONS, REPLAY_QUEUE].map(
        (name) => new Queue(name, { connection: redis, prefix: queuePrefix(app.config, name as QueueName) }),
      );
      try {
        const horizon = Date.now() + SETTLE_MS;
        const pending = async () => {
          const counts = await Promise.all(
            queues.map((queue) => queue.getJobCounts("waiting", "active", "prioritized", "waiting-children")),
          );
          // A delayed copy of a job that finished meanwhile (a BullMQ delivery that found it running
          // in-process and retries once that run could count as abandoned) can change nothing; nor
          // can the copy of a waiting job (a quota, a delay) that comes after this wait ends (a job
          // run in-process that waits for a day's quota).
          const delayed = (await Promise.all(queues.map((queue) => queue.getJobs(["delayed"])))).flat();
          const idOf = (job: (typeof delayed)[number]) =>
            typeof job?.data?.jobId === "string" ? (job.data.jobId as string) : job?.id;
          const late = delayed.filter((job) => job !== undefined && job.timestamp + job.delay > horizon);
          const { rows } = await app.sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM unnest($1::text[]) AS d(id)
             WHERE d.id IS NULL OR d.id !~ '^[0-9a-f-]{36}$'
                OR NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = d.id::uuid
                                 AND (j.status IN ('succeeded', 'dead', 'cancelled')
                                      OR (j.status = 'waiting' AND j.id::text = ANY($2::text[]))))`,
            [delayed.map(idOf), late.map(idOf)],
          );
          return counts.flatMap((count) => Object.values(count)).reduce((sum, n) => sum + n, 0) + rows[0]!.n;
        };
        await waitFor(pending, (n) => n === 0, SETTLE_MS);
      } finally {
        await Promise.all(queues.map((queue) => queue.close()));
        redis.disconnect();
      }
    },
  };
  return app;
}

const fakes: FakeServer[] = [];
// Registered when a test file imports this module, so at the file's top level: it runs after the
// afterAll of every describe block, once the app that calls the fakes is closed.
afterAll(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** A fake HTTP server (see fake-server.ts) started now, closed at the end of the file. */
export async function fakeServer(
  fallback?: FakeReply,
  route?: (request: ReceivedRequest) => FakeReply | undefined,
): Promise<FakeServer> {
  const fake = await startFakeServer(fallback, route);
  fakes.push(fake);
  return fake;
}

/**
 * A fake HTTP server started in beforeAll (declare it before `useApp` to put its URL in the env)
 * and closed at the end of the file. Its `url` and `received` are there once it has started.
 */
export function useFakeServer(
  fallback?: FakeReply,
  route?: (request: ReceivedRequest) => FakeReply | undefined,
): FakeServer {
  let fake: FakeServer | undefined;
  beforeAll(async () => {
    fake = await fakeServer(fallback, route);
  });
  const started = () => {
    if (!fake) throw new Error("the fake server starts in beforeAll: use it in a test or a later hook");
    return fake;
  };
  return {
    get url() {
      return started().url;
    },
    get received() {
      return started().received;
    },
    get mostInFlight() {
      return started().mostInFlight;
    },
    reply: (...replies) => started().reply(...replies),
    close: () => started().close(),
  };
}
