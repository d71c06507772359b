// The re-opening sweep: a channel that was told an alert's opening less than 10 minutes ago is not
// told a re-opening at once (channel-memory.ts); the re-opening waits for the window's end, and this
// sweep, in every worker, tells it then if the alert is still open (and nothing if it resolved
// meanwhile). Workers share the work: each takes the alerts no other transaction holds.
// `run(now)` takes the clock as an argument: tests run it at the times they choose.
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { classify } from "../../common/outbound/errors.js";
import { Periodic } from "../../common/periodic.js";
import { NotificationOutbox } from "./notification-outbox.js";

/** How often a worker looks for re-openings due: how late after its window one may be told. */
const REOPENING_SWEEP_MS = 15_000;
/** Alerts per transaction. */
const BATCH = 200;

@Injectable()
export class ReopeningSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("reopening-sweep");
  private readonly sweeps = new Periodic(() =>
    this.run(new Date()).catch((error: unknown) =>
      this.logger.warn({
        msg: "re-opening sweep failed; the next one retries",
        errorCode: classify(error).code,
      }),
    ),
  );

  constructor(private readonly notifications: NotificationOutbox) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(REOPENING_SWEEP_MS);
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /** Ends the deferrals due at `now`; answers how many re-opening notifications it created. */
  async run(now: Date): Promise<number> {
    let told = 0;
    for (;;) {
      const created = await this.notifications.tellDeferred(now, BATCH);
      told += created.told;
      if (created.alerts < BATCH) break;
    }
    if (told > 0) this.logger.log({ msg: "told deferred re-openings", notifications: told });
    return told;
  }
}
