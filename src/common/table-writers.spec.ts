import { isAllowed, tableWrites, writersCheck } from "./table-writers.js";

const jobs = { table: "jobs", model: "job" };

describe("tableWrites", () => {
  it("finds SQL writes of the table, quoted, qualified or split over lines", () => {
    expect(tableWrites("await pool.query(`UPDATE jobs SET status = 'queued'`)", jobs)).toEqual([1]);
    expect(tableWrites('x;\nawait db.$executeRaw`update "jobs" set x = 1`', jobs)).toEqual([2]);
    expect(tableWrites("INSERT INTO public.jobs (id) VALUES ($1)", jobs)).toEqual([1]);
    expect(tableWrites("DELETE FROM jobs j USING expired e", jobs)).toEqual([1]);
    expect(tableWrites("MERGE INTO jobs USING x ON true", jobs)).toEqual([1]);
    expect(tableWrites("TRUNCATE TABLE ONLY jobs", jobs)).toEqual([1]);
    expect(tableWrites("a;\n`WITH moved AS (\n  UPDATE\n    jobs SET x = 1 RETURNING id)`", jobs)).toEqual([
      3,
    ]);
  });

  it("finds Prisma writes through the model, in one call or a chain over lines, and nested writes", () => {
    expect(tableWrites("await tx.job.update({ where: { id } })", jobs)).toEqual([1]);
    expect(tableWrites("await this.prisma.job\n  .deleteMany()", jobs)).toEqual([1]);
    expect(tableWrites("await prisma.job.createManyAndReturn({", jobs)).toEqual([1]);
    expect(tableWrites("data: {\n  jobs: { create: [{ operation }] },", jobs)).toEqual([2]);
    expect(tableWrites("data: { job: { update: { status } } }", jobs)).toEqual([1]);
  });

  it("does not take reads, other tables, or words that only look alike for writes", () => {
    expect(tableWrites("SELECT status FROM jobs WHERE id = $1 FOR UPDATE", jobs)).toEqual([]);
    expect(tableWrites("INSERT INTO job_attempts (job_id) VALUES ($1)", jobs)).toEqual([]);
    expect(tableWrites("UPDATE jobs_archive SET x = 1", jobs)).toEqual([]);
    expect(tableWrites("INSERT INTO receipts (id) ON CONFLICT (job_key) DO UPDATE SET n = 1", jobs)).toEqual(
      [],
    );
    expect(tableWrites("await tx.jobAttempt.create({ data })", jobs)).toEqual([]);
    expect(tableWrites("await tx.job.findMany({ where })", jobs)).toEqual([]);
    expect(tableWrites("include: { jobs: { select: { id: true } } }", jobs)).toEqual([]);
    expect(tableWrites('metrics.inc({ job: "update" }); const jobs = { created: 1 };', jobs)).toEqual([]);
  });

  it("answers each line once, in order", () => {
    expect(tableWrites("x\nUPDATE jobs SET a = 1; DELETE FROM jobs;\ntx.job.update(", jobs)).toEqual([2, 3]);
  });
});

describe("writersCheck", () => {
  const files = [
    { path: "jobs/state/requeue.ts", text: "UPDATE jobs SET status = 'queued'" },
    { path: "jobs/dispatcher.ts", text: "x\ny\nawait tx.job.update({})" },
    { path: "leads/leads.repository.ts", text: "SELECT * FROM jobs" },
  ];

  it("names the writers outside the allowed files and folders, with their lines", () => {
    expect(writersCheck(files, jobs, ["jobs/state/"])).toEqual({
      outside: [{ path: "jobs/dispatcher.ts", lines: [3] }],
      idle: [],
    });
    expect(writersCheck(files, jobs, ["jobs/state/", "jobs/dispatcher.ts"]).outside).toEqual([]);
  });

  it("names an allowance under which nothing writes", () => {
    expect(writersCheck(files, jobs, ["jobs/state/", "jobs/dispatcher.ts", "leads/"]).idle).toEqual([
      "leads/",
    ]);
  });

  it("allows a file by its exact path, a folder only with its trailing slash", () => {
    expect(isAllowed("jobs/state/requeue.ts", ["jobs/state/"])).toBe(true);
    expect(isAllowed("jobs/state-old.ts", ["jobs/state/"])).toBe(false);
    expect(isAllowed("jobs/state/requeue.ts", ["jobs/state"])).toBe(false);
    expect(isAllowed("leads/leads.repository.ts", ["leads/leads.repository.ts"])).toBe(true);
    expect(isAllowed("leads/leads.repository.tsx", ["leads/leads.repository.ts"])).toBe(false);
  });
});
