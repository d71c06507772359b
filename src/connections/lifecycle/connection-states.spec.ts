import {
  alertChanges,
  CONNECTION_STATUSES,
  ConnectionTransitionRefused,
  jobEffect,
  LIVE,
  next,
  type ConnectionState,
  TRANSITIONS,
} from "./connection-states.js";

const state = (
  status: ConnectionState["status"],
  oauthStatus: ConnectionState["oauthStatus"] = "connected",
) => ({
  status,
  oauthStatus,
});

describe("connection transitions", () => {
  it("move the status as the table says", () => {
    expect(next("pause", state("active"))).toEqual(state("paused"));
    expect(next("resume", state("credential_error"))).toEqual(state("active"));
    expect(next("disable", state("paused"))).toEqual(state("disabled"));
    expect(next("refuseCredentials", state("active"))).toEqual(state("credential_error"));
    // A refused grant: an active connection stops calling the provider; a paused one stays paused.
    expect(next("requireReauthorization", state("active"))).toEqual(
      state("credential_error", "reauthorization_required"),
    );
    expect(next("requireReauthorization", state("paused"))).toEqual(
      state("paused", "reauthorization_required"),
    );
    // A reconnect ends a credential error; a paused connection stays paused with its new grant.
    expect(next("reconnect", state("credential_error", "reauthorization_required"))).toEqual(state("active"));
    expect(next("reconnect", state("paused", "reauthorization_required"))).toEqual(state("paused"));
    expect(next("finishCleanUp", state("disabled"))).toEqual(state("disabled", "not_connected"));
  });

  it("refuse a transition from a status it may not start from, with a typed error", () => {
    for (const name of [
      "update",
      "pause",
      "resume",
      "rotateSecret",
      "reconnect",
      "syncNow",
      "disable",
    ] as const) {
      const refusal = (() => {
        try {
          next(name, state("disabled"));
        } catch (error) {
          return error;
        }
      })();
      expect(refusal).toBeInstanceOf(ConnectionTransitionRefused);
      expect(refusal).toMatchObject({
        status: 409,
        code: "connection_disabled",
        transition: name,
        from: "disabled",
      });
    }
    expect(() => next("refuseCredentials", state("paused"))).toThrow(ConnectionTransitionRefused);
    expect(() => next("takeCleanUp", state("active"))).toThrow(/connection is active/);
  });

  it("name only statuses that exist, and every transition starts from some status", () => {
    for (const [name, definition] of Object.entries(TRANSITIONS)) {
      expect([name, definition.from.length > 0]).toEqual([name, true]);
      for (const status of definition.from) expect(CONNECTION_STATUSES).toContain(status);
    }
  });
});

describe("the alerts a change implies", () => {
  it("opens and resolves the credential and reauthorization alerts with their condition", () => {
    expect(alertChanges(state("active"), state("credential_error"))).toEqual([
      { kind: "raise", type: "connection.credential_error" },
    ]);
    expect(alertChanges(state("credential_error"), state("active"))).toEqual([
      { kind: "clear", type: "connection.credential_error" },
    ]);
    // A refused grant says so itself: no second, credential alert.
    expect(alertChanges(state("active"), state("credential_error", "reauthorization_required"))).toEqual([
      { kind: "raise", type: "connection.reauthorization_required" },
    ]);
    expect(alertChanges(state("credential_error", "reauthorization_required"), state("active"))).toEqual([
      { kind: "clear", type: "connection.reauthorization_required" },
      { kind: "clear", type: "connection.credential_error" },
    ]);
    expect(alertChanges(state("active"), state("paused"))).toEqual([]);
  });

  it("resolves every connection alert when the connection is disabled, and opens none", () => {
    expect(
      alertChanges(
        state("paused", "reauthorization_required"),
        state("disabled", "reauthorization_required"),
      ),
    ).toEqual([
      { kind: "clear", type: "connection.reauthorization_required" },
      { kind: "clear", type: "connection.credential_error" },
      { kind: "clear", type: "connection.silent" },
    ]);
  });
});

describe("what a transition does to the jobs at once", () => {
  it("queues held and blocked jobs again on entering active, cancels on entering disabled", () => {
    // A resume names `active` whatever it starts from (from active too: the jobs a race left held).
    for (const from of LIVE) expect([from, jobEffect("resume", from)]).toEqual([from, "resume"]);
    for (const from of LIVE) expect([from, jobEffect("disable", from)]).toEqual([from, "cancel"]);
    // A reconnect enters active only from a credential error; a paused connection stays paused.
    expect(jobEffect("reconnect", "credential_error")).toBe("resume");
    expect(jobEffect("reconnect", "paused")).toBeUndefined();
    expect(jobEffect("reconnect", "active")).toBeUndefined();
  });

  it("does nothing at once on entering paused or credential_error, nor for a transition naming no status", () => {
    expect(jobEffect("pause", "active")).toBeUndefined();
    expect(jobEffect("refuseCredentials", "active")).toBeUndefined();
    expect(jobEffect("requireReauthorization", "active")).toBeUndefined();
    expect(jobEffect("update", "credential_error")).toBeUndefined();
    expect(jobEffect("replaceCredentials", "credential_error")).toBeUndefined();
  });
});
