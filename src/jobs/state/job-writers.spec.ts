// Architecture test: the job state machine (src/jobs/state/) is the only writer of the `jobs`
// table. Any other file of src/ that inserts, updates or deletes a job, in SQL or through Prisma's
// model API, fails this test with its path and line (the scan: src/common/table-writers.ts). Jobs
// made elsewhere go through the machine's statements (JobStateMachine.create, JobOutbox.add's
// `create`, the receipt statement's `insertJobsSql`).
import { sourceFiles } from "../../../test/support/source-files.js";
import { tableWrites, writersCheck } from "../../common/table-writers.js";

const JOBS = { table: "jobs", model: "job" };

/** The writers of `jobs`. */
const WRITERS = [
  "jobs/state/",
  // Retention's purge deletes finished jobs (and never an unfinished one) together with their
  // receipts, payloads and replay items, in one statement per batch: a deletion of finished rows, not
  // a change of status, and one statement with the receipts, so it stays beside them.
  "retention/retention.repository.ts",
];

const jobWrites = (source: string) => tableWrites(source, JOBS);

describe("the job state machine is the only writer of jobs", () => {
  it("finds writes of jobs, not of job_attempts or other tables", () => {
    expect(jobWrites("`UPDATE jobs SET status = 'cancelled'`")).toEqual([1]);
    expect(jobWrites("`INSERT INTO jobs (tenant_id, connection_id)`")).toEqual([1]);
    expect(jobWrites("DELETE FROM jobs j USING expired e")).toEqual([1]);
    expect(jobWrites("await tx.job.updateMany({ where })")).toEqual([1]);
    expect(jobWrites("data: { jobs: { createMany: { data } } }")).toEqual([1]);
    expect(jobWrites("INSERT INTO job_attempts (job_id, attempt) VALUES ($1, $2)")).toEqual([]);
    expect(jobWrites("await tx.jobAttempt.create({ data })")).toEqual([]);
    expect(jobWrites("SELECT 1 FROM jobs WHERE receipt_id = ANY($1::uuid[]) FOR UPDATE")).toEqual([]);
    expect(jobWrites("DELETE FROM replay_batch_jobs i USING expired e")).toEqual([]);
  });

  it("no file outside src/jobs/state/ (and retention's purge) writes jobs", () => {
    expect(writersCheck(sourceFiles(), JOBS, WRITERS)).toEqual({ outside: [], idle: [] });
  });
});
