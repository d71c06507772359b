// A dispatcher's ear for the job outbox (src/jobs/job-outbox.ts): one dedicated Postgres connection
// (not the pool's: a LISTEN belongs to its session) that LISTENs on the outbox channel and hands each
// payload's job ids on. One worker of a database listens at a time: the one whose connection holds
// the session advisory lock LISTENER_LOCK; the others ask for it every FOLLOW_MS and take over when
// the listener's session ends (its worker stopped or died), so each committed job is handed to
// BullMQ once, not once per worker. A lost connection is opened again after a pause; what was
// committed while no one listened is the dispatcher's poll's to find.
import { Logger } from "@nestjs/common";
import pg from "pg";
import { JOB_OUTBOX_CHANNEL, outboxIds } from "./job-outbox.js";

const RECONNECT_MS = 1_000;
const FOLLOW_MS = 1_000;
/** The session advisory lock of the listening worker (advisory locks are per database). */
export const LISTENER_LOCK = 4_210_777_001;

export class OutboxListener {
  private readonly logger = new Logger("job-outbox");
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private follow: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly heard: (ids: string[]) => void,
  ) {}

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.follow);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      connectionTimeoutMillis: 2_000,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      clearTimeout(this.follow);
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
    await this.lead(client, () => lost, onLost);
  }

  /** LISTENs once `client` holds LISTENER_LOCK; until then asks again every FOLLOW_MS. */
  private async lead(client: pg.Client, lost: () => boolean, onLost: (error?: Error) => void): Promise<void> {
    try {
      const { rows } = await client.query<{ led: boolean }>("SELECT pg_try_advisory_lock($1) AS led", [
        LISTENER_LOCK,
      ]);
      if (this.stopped || lost()) return;
      if (!rows[0]!.led) {
        this.follow = setTimeout(() => void this.lead(client, lost, onLost), FOLLOW_MS);
        return;
      }
      await client.query(`LISTEN ${JOB_OUTBOX_CHANNEL}`);
      this.logger.log({ msg: "job outbox taken: this worker hands committed jobs to BullMQ" });
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
