// The registration sweep: every registered connection is re-synced with its provider at
// least every REGISTRATION_SYNC_INTERVAL_SECONDS (default daily, as Yelp advises for subscriptions):
// a provider-sync job repairs what drifted (a Thumbtack webhook deleted or disabled, a Yelp
// subscription dropped), removes Yelp subscriptions of businesses Leadgate holds only in disabled
// connections, and renews self-serve Yelp webhooks before they expire. A sync that failed for good
// (its job dead) is tried again an hour after it started (SYNC_RETRY_SECONDS). Any number of worker
// replicas may sweep: starting a sync locks the connection, and one on its way blocks another.
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { classify } from "../common/outbound/errors.js";
import { Periodic } from "../common/periodic.js";
import { PrismaService } from "../database/prisma.service.js";
import { API_PROVIDERS } from "../providers/capabilities.js";
import { JobQueue } from "../jobs/job-queue.js";
import { ProviderSyncJobs, type SyncTarget } from "./provider-sync.js";

/** How often the sweep looks for due connections. */
const SWEEP_INTERVAL_MS = 60_000;
/** Connections started per sweep, the longest due first; the next sweep takes the rest. */
const BATCH = 100;

@Injectable()
export class RegistrationSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("registration-sweep");
  private readonly sweeps = new Periodic(() => this.sweep());

  constructor(
    private readonly prisma: PrismaService,
    private readonly syncs: ProviderSyncJobs,
    private readonly queue: JobQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(SWEEP_INTERVAL_MS);
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /** Starts the due re-syncs; answers how many connections were due. */
  async sweep(): Promise<number> {
    let due: SyncTarget[];
    try {
      // Platform-wide by nature (no tenant yet); each start below is scoped by tenant and id.
      ({ rows: due } = await this.prisma.pool.query<SyncTarget>(
        `SELECT id AS "connectionId", tenant_id AS "tenantId" FROM connections
         WHERE status = 'active' AND provider = ANY($2::text[]) AND credentials IS NOT NULL
           AND registration_status <> 'manual'
           AND (registration_due_at IS NULL OR registration_due_at <= now())
         ORDER BY registration_due_at NULLS FIRST LIMIT $1`,
        [BATCH, API_PROVIDERS],
      ));
    } catch (error) {
      this.logger.warn({
        msg: "registration sweep failed; the next one retries",
        errorCode: classify(error).code,
      });
      return 0;
    }
    for (const target of due) {
      try {
        await this.queue.enqueue(await this.syncs.startSweep(target));
      } catch (error) {
        this.logger.warn({
          msg: "could not start a registration sync; the next sweep retries",
          ...target,
          errorCode: classify(error).code,
        });
      }
    }
    return due.length;
  }
}
