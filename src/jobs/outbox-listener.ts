// A dispatcher's ear for the job outbox (src/jobs/job-outbox.ts): one dedicated Postgres connection
// (not the pool's: a LISTEN belongs to its session) that LISTENs on the outbox channel and hands each
// payload's job ids on. One worker of a database listens at a time: the one whose connection holds
// the session advisory lock LISTENER_LOCK; the others ask for it every BEAT_MS and take over when
// the listener's session ends, so each committed job is handed on once, not once per worker.
// The session ends when its worker stops or dies, and also when it stalls: the listener sends a
// query every BEAT_MS, and its session is opened with idle_session_timeout = SILENT_MS, so Postgres
// ends a session that went quiet (a frozen process, a half-open connection) and frees the lock — a
// listener that no longer reads would also keep Postgres from trimming its notification queue. A
// lost connection is opened again after a pause; what was committed while no one listened is the
// dispatcher's poll's to find.
import { Logger } from "@nestjs/common";
import pg from "pg";
import { JOB_OUTBOX_CHANNEL, outboxIds } from "./job-outbox.js";

const RECONNECT_MS = 1_000;
/** How often the listener proves it is alive, and a follower asks for the lock. */
const BEAT_MS = 1_000;
/** A listener's session quiet this long is ended by Postgres (and a query this slow by the client). */
export const SILENT_MS = 10_000;
/** The session advisory lock of the listening worker (advisory locks are per database). */
export const LISTENER_LOCK = 4_210_777_001;

export class OutboxListener {
  private readonly logger = new Logger("job-outbox");
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private beat: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly heard: (ids: string[]) => void,
  ) {}

  /** Resolves once the first connection listens, follows, or failed (then it retries on its own). */
  start(): Promise<void> {
    return this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.beat);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      connectionTimeoutMillis: 2_000,
      query_timeout: SILENT_MS,
      keepAlive: true,
      options: `-c idle_session_timeout=${SILENT_MS}`,
    });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      clearTimeout(this.beat);
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn({
        msg: "job outbox listener lost its connection; reconnecting (the poll covers the gap)",
        error: error?.message,
      });
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        void this.connect();
      }, RECONNECT_MS);
    };
    client.on("notification", (message) => {
      if (message.channel === JOB_OUTBOX_CHANNEL) this.heard(outboxIds(message.payload));
    });
    client.on("error", onLost);
    client.on("end", () => onLost());
    try {
      await client.connect();
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.stopped || lost) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    await this.tick(client, false, () => lost, onLost);
  }

  /**
   * One beat: a listener proves it is alive; a follower asks for LISTENER_LOCK and, once it holds
   * it, LISTENs. Then the next beat in BEAT_MS.
   */
  private async tick(
    client: pg.Client,
    listening: boolean,
    lost: () => boolean,
    onLost: (error?: Error) => void,
  ): Promise<void> {
    try {
      if (listening) {
        await client.query("SELECT 1");
      } else {
        const { rows } = await client.query<{ led: boolean }>("SELECT pg_try_advisory_lock($1) AS led", [
          LISTENER_LOCK,
        ]);
        if (rows[0]!.led && !this.stopped && !lost()) {
          await client.query(`LISTEN ${JOB_OUTBOX_CHANNEL}`);
          listening = true;
          this.logger.log({
            msg: "job outbox taken: this worker runs committed jobs, or hands them to BullMQ",
          });
        }
      }
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.stopped || lost()) return;
    this.beat = setTimeout(() => void this.tick(client, listening, lost, onLost), BEAT_MS);
  }
}
