// job.dead, from the job state machine's outcomes (JobOutcomes, src/jobs/job-outcomes.ts), in the
// transaction of the statement that moved the jobs: the jobs one statement moved to dead count on
// their group alerts with one upsert (count + n per group); jobs one statement moved to succeeded
// after a failure (a replay, a retry that passed) resolve their group's alert once no job of that
// group is dead any more. Notifications raise nothing: a failing channel must not notify about itself.
import { Injectable } from "@nestjs/common";
import type { Tx } from "../database/transactions.js";
import type { JobOutcome, JobOutcomes } from "../jobs/job-outcomes.js";
import { type AlertGroup, AlertBook } from "./alert-book.js";
import { groupKey } from "./alert-statements.js";

const TYPE = "job.dead" as const;

/** The job.dead group of a job's outcome. */
const groupOf = (job: JobOutcome): AlertGroup => ({
  tenantId: job.tenantId,
  type: TYPE,
  connectionId: job.connectionId,
  operation: job.operation,
  errorCode: job.errorCode,
});

@Injectable()
export class DeadJobAlerts implements JobOutcomes {
  constructor(private readonly alerts: AlertBook) {}

  async died(tx: Tx, jobs: readonly JobOutcome[]): Promise<void> {
    await this.alerts.raiseMany(
      tx,
      jobs
        .filter((job) => job.operation !== "notification")
        .map((job) => ({
          ...groupOf(job),
          summary: `${job.operation} jobs are dead with ${job.errorCode ?? "no error code"}`,
        })),
    );
  }

  async recovered(tx: Tx, jobs: readonly JobOutcome[]): Promise<void> {
    const groups = new Map<string, AlertGroup>();
    for (const job of jobs) {
      if (job.operation === "notification" || job.errorCode === null) continue;
      const group = groupOf(job);
      groups.set(`${job.tenantId}/${groupKey(group)}`, group);
    }
    if (groups.size === 0) return;
    const input = [...groups.values()];
    // The groups with an unresolved alert and no dead job left (most recoveries have no alert).
    const cleared = await tx.$queryRawUnsafe<{ i: number }[]>(
      `SELECT g.i FROM jsonb_to_recordset($1::jsonb)
         AS g(i int, tenant_id uuid, connection_id uuid, operation text, error_code text, group_key text)
       WHERE EXISTS (SELECT 1 FROM alerts a WHERE a.tenant_id = g.tenant_id AND a.group_key = g.group_key
                       AND a.status <> 'resolved')
         AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = g.tenant_id
                           AND j.connection_id IS NOT DISTINCT FROM g.connection_id AND j.operation = g.operation
                           AND j.status = 'dead' AND j.last_error_code = g.error_code)`,
      JSON.stringify(
        input.map((group, i) => ({
          i,
          tenant_id: group.tenantId,
          connection_id: group.connectionId,
          operation: group.operation,
          error_code: group.errorCode,
          group_key: groupKey(group),
        })),
      ),
    );
    await this.alerts.clearGroups(
      tx,
      cleared.map(({ i }) => input[i]!),
    );
  }
}
