import {
  allowed,
  initialStatus,
  IN_PROGRESS,
  JOB_STATUSES,
  type JobStatus,
  REPLAYABLE,
  requeuedMaxAttempts,
  sourceStatuses,
  TERMINAL,
  TRANSITIONS,
  type TransitionName,
} from "./job-states.js";

const NAMES = Object.keys(TRANSITIONS) as TransitionName[];

/** Statuses reachable from `status` by the transitions the system takes on its own (no operator). */
function reachable(
  status: JobStatus,
  operator: readonly TransitionName[] = ["replay", "resume"],
): Set<JobStatus> {
  const seen = new Set<JobStatus>([status]);
  for (let grew = true; grew;) {
    grew = false;
    for (const name of NAMES.filter((n) => !operator.includes(n))) {
      const { from, to } = TRANSITIONS[name];
      for (const source of [...seen]) {
        if ((from as readonly JobStatus[]).includes(source) && !seen.has(to)) {
          seen.add(to);
          grew = true;
        }
      }
    }
  }
  return seen;
}

describe("the job state machine's transition table", () => {
  it("names only known statuses, and every status is the source or target of some transition", () => {
    const used = new Set<JobStatus>();
    for (const { from, to } of Object.values(TRANSITIONS)) {
      for (const status of [...from, to]) {
        expect(JOB_STATUSES).toContain(status);
        used.add(status);
      }
    }
    expect([...used].sort()).toEqual([...JOB_STATUSES].sort());
  });

  it("lets a terminal job move only by an operator's replay", () => {
    for (const status of TERMINAL) {
      const moves = NAMES.filter((name) => allowed(name, status));
      expect(moves).toEqual(["replay"]);
    }
  });

  it("gives every job on its way a path to a terminal status without an operator (work never silently stops)", () => {
    // blocked and held wait for a person (resume) by design; every other status can end on its own.
    for (const status of JOB_STATUSES.filter(
      (s) => !TERMINAL.includes(s) && s !== "blocked" && s !== "held",
    )) {
      const ends = [...reachable(status)].filter((s) => TERMINAL.includes(s));
      expect({ status, ends: ends.length > 0 }).toEqual({ status, ends: true });
    }
  });

  it("ends a wait only by claim, release (its dependency succeeded), expiry or a disabled connection", () => {
    expect(NAMES.filter((name) => allowed(name, "waiting")).sort()).toEqual(
      ["cancel", "claim", "expire", "release"].sort(),
    );
    expect(TRANSITIONS.expire.to).toBe("dead");
  });

  it("closes an attempt only from running, and undoes the claim (no attempt used) for hold, park, cancelRun and wait", () => {
    for (const name of ["succeed", "retry", "die", "block"] as const) {
      expect(TRANSITIONS[name].from).toEqual(["running"]);
      expect(TRANSITIONS[name].countsAttempt).toBe(true);
    }
    for (const name of ["hold", "park", "cancelRun", "wait"] as const) {
      expect(TRANSITIONS[name].from).toEqual(["running"]);
      expect(TRANSITIONS[name].countsAttempt).toBe(false);
    }
  });

  it("refuses illegal transitions", () => {
    expect(allowed("replay", "running")).toBe(false);
    expect(allowed("replay", "queued")).toBe(false);
    expect(allowed("replay", "waiting")).toBe(false);
    expect(allowed("claim", "succeeded")).toBe(false);
    expect(allowed("claim", "held")).toBe(false);
    expect(allowed("succeed", "queued")).toBe(false);
    expect(allowed("resume", "dead")).toBe(false);
    expect(allowed("expire", "running")).toBe(false);
    expect(allowed("release", "dead")).toBe(false);
  });

  it("answers replay's 409 for every status still on its way, and replays without force only dead, blocked, cancelled", () => {
    for (const status of IN_PROGRESS) expect(allowed("replay", status)).toBe(false);
    expect(sourceStatuses("replay", ["dead", "running", "succeeded"])).toEqual(["dead", "succeeded"]);
    expect(REPLAYABLE.every((status) => allowed("replay", status))).toBe(true);
    expect(REPLAYABLE).not.toContain("succeeded");
  });

  it("requeues (replay, resume, release) all lead to queued under one attempt policy", () => {
    for (const name of ["replay", "resume", "release"] as const) expect(TRANSITIONS[name].to).toBe("queued");
    expect(requeuedMaxAttempts(0, 6)).toBe(6);
    expect(requeuedMaxAttempts(6, 6)).toBe(12); // a dead job replayed gets its full allowance again
    expect(requeuedMaxAttempts(2, 8)).toBe(10); // earlier attempts stay counted in the history
  });

  it("starts a job held while its connection is paused, waiting when it runs after another job, else queued", () => {
    expect(initialStatus(true)).toBe("held");
    expect(initialStatus(false)).toBe("queued");
    expect(initialStatus(false, true)).toBe("waiting"); // runs after another job of its receipt
    expect(initialStatus(true, true)).toBe("held");
  });
});
