// The answers of the replay routes (replays.controller.ts), as OpenAPI schemas.
import { ApiProperty } from "@nestjs/swagger";
import { JobDetail } from "../admin/jobs.js";
import { NullableDate, NullableId, NullableString } from "../common/api-properties.js";
import { JOB_STATUSES } from "../jobs/state/job-states.js";
import { OPERATIONS } from "../jobs/operations.js";

export class ReplayedJob {
  @ApiProperty({ type: () => JobDetail, description: "queued again under the same job key" })
  job!: JobDetail;
}

/** One job a bulk replay would take (a dry run's sample). */
export class ReplaySampleJob {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @NullableId()
  connectionId!: string | null;

  @NullableId()
  receiptId!: string | null;

  @ApiProperty({ enum: OPERATIONS })
  operation!: string;

  @ApiProperty()
  jobKey!: string;

  @ApiProperty({ enum: JOB_STATUSES })
  status!: string;

  @ApiProperty()
  attempts!: number;

  @NullableString()
  lastErrorCode!: string | null;

  @ApiProperty()
  createdAt!: Date;
}

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
