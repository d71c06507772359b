// The answers of the replay routes (replays.controller.ts), as OpenAPI schemas.
import { ApiProperty, PickType } from "@nestjs/swagger";
import { JobDetail, JobView } from "../jobs/job-reads.js";
import { NullableDate, NullableId } from "../common/api-properties.js";

export class ReplayedJob {
  @ApiProperty({ type: () => JobDetail, description: "queued again under the same job key" })
  job!: JobDetail;
}

/** A job queued again by a receipt's replay. */
export class RequeuedJob extends PickType(JobView, ["id", "jobKey", "operation"] as const) {}

export class ReplayedReceipt {
  @ApiProperty({ type: () => RequeuedJob, isArray: true, description: "the jobs queued again" })
  jobs!: RequeuedJob[];
}

/** One job a bulk replay would take (a dry run's sample): the list view's identifying columns. */
export class ReplaySampleJob extends PickType(JobView, [
  "id",
  "tenantId",
  "connectionId",
  "receiptId",
  "operation",
  "jobKey",
  "status",
  "attempts",
  "lastErrorCode",
  "createdAt",
] as const) {}

/** `dryRun`: how many jobs the replay would take (at most `limit`), and the first few. */
export class ReplayPreview {
  @ApiProperty()
  matched!: number;

  @ApiProperty({ type: () => ReplaySampleJob, isArray: true, description: "the oldest 10" })
  sample!: ReplaySampleJob[];
}

/** A bulk replay started: it runs in the background, paced; GET /admin/replays/{id} follows it. */
export class ReplayCreated {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty()
  matched!: number;
}

/** A bulk replay's progress. */
export class BatchStatus extends ReplayCreated {
  @NullableId("null: an operator's replay over every tenant")
  tenantId!: string | null;

  @ApiProperty({
    enum: ["pending", "running", "done"],
    description:
      "pending: not started · running: jobs being queued or still on their way · done: every job finished or skipped",
  })
  status!: "pending" | "running" | "done";

  @ApiProperty()
  queued!: number;

  @ApiProperty()
  skipped!: number;

  @ApiProperty()
  succeeded!: number;

  @ApiProperty()
  failed!: number;

  @ApiProperty()
  createdAt!: Date;

  @NullableDate()
  finishedAt!: Date | null;
}
