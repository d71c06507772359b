// A connection's lifecycle, as data (docs/design.md "Connections"). A connection is pending consent
// (an OAuth attempt, not yet a row), then `active`; it can be paused, get its credentials refused
// (`credential_error`; with `oauth.status: reauthorization_required` when the provider refused the
// grant itself), and is disabled for good. Beside the status it carries three sub-states:
// the grant (`oauth`), the provider-side webhook (`registration`) and reconciliation.
//
// Every change of a connection is one of the named TRANSITIONS below, asked of the connection store
// (src/connections/connection-store.ts), which alone writes the row: the statuses a transition may
// start from, the status it leaves, and what it does to the grant. A transition from any other
// status is refused (ConnectionTransitionRefused), never a silent no-op. Pure: no database here.
import { AppError } from "../../common/app-error.js";

export const CONNECTION_STATUSES = ["active", "paused", "credential_error", "disabled"] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** The provider grant of a connection (api.md "Connection views gain"). */
export const OAUTH_STATUSES = ["connected", "reauthorization_required", "not_connected"] as const;
export type OAuthStatus = (typeof OAUTH_STATUSES)[number];

/** The provider-side webhook (api.md `registration`): Leadgate's, or left to the owner (`manual`). */
export const REGISTRATION_STATUSES = ["active", "pending", "error", "manual"] as const;
export type RegistrationStatus = (typeof REGISTRATION_STATUSES)[number];

/**
 * What a connection's status does to its jobs: read by the job runner before it runs one, and by
 * the connection store when a transition enters the status (ENTERING).
 */
export type JobGate = "run" | "hold" | "park" | "cancel";

export interface StateDefinition {
  /** `hold`: wait as `held` until resumed; `park`: jobs calling the provider wait as `blocked`; `cancel`: cancelled. */
  jobs: JobGate;
  /**
   * Whether deliveries are still accepted, read by ingest (src/ingestion/ingestion.service.ts): a
   * delivery to a connection whose status does not accept answers `410 connection_disabled`.
   */
  accepts: boolean;
}

export const STATES: Record<ConnectionStatus, StateDefinition> = {
  active: { jobs: "run", accepts: true },
  // Receipts are still stored; their jobs wait as `held` until resume.
  paused: { jobs: "hold", accepts: true },
  // Only jobs that call the provider with the refused credentials wait (`blocked`); resume or a
  // reconnect releases them.
  credential_error: { jobs: "park", accepts: true },
  // History is kept; unfinished jobs are cancelled, except a disconnect's clean-up.
  disabled: { jobs: "cancel", accepts: false },
};

/**
 * What entering a status does at once to the connection's jobs that are not running, by its gate:
 * the job state machine's transition of that name (src/jobs/state/job-states.ts), taken by the
 * connection store in the transaction of the connection's transition. `resume` queues its held and
 * blocked jobs again, `cancel` cancels its unfinished ones. `hold` and `park` do nothing at once: the
 * job runner holds or parks each job as it claims it, and ingest creates a paused connection's jobs
 * `held`.
 */
export type JobEffect = "resume" | "cancel";
export const ENTERING: Record<JobGate, JobEffect | undefined> = {
  run: "resume",
  hold: undefined,
  park: undefined,
  cancel: "cancel",
};

/** Every status but `disabled`: a live connection. */
export const LIVE = ["active", "paused", "credential_error"] as const satisfies readonly ConnectionStatus[];
const ANY = CONNECTION_STATUSES;

export interface TransitionDefinition {
  /** The statuses the transition may start from. */
  from: readonly ConnectionStatus[];
  /**
   * The status it leaves: one for all, a change for some (unlisted: unchanged), or none (unchanged).
   * A status named here is entered, with what ENTERING says it does to the jobs (jobEffect).
   */
  to?: ConnectionStatus | Partial<Record<ConnectionStatus, ConnectionStatus>>;
  /** What it does to the grant's status, if anything. */
  oauth?: OAuthStatus;
  /**
   * It replaces the provider credentials: a token refresh of the old ones under way loses its lease,
   * so it cannot store its token over the new ones (the refresher stores only while it holds it).
   */
  replacesCredentials?: true;
}

/**
 * Every named change of a connection. `from` ANY: bookkeeping that goes on whatever the status
 * (a disconnect's clean-up runs on a disabled connection; a registration outcome is recorded as it comes).
 */
export const TRANSITIONS = {
  // --- the lifecycle, asked for by people (admin API, OAuth callback) ---
  /** Display name, settings. */
  update: { from: LIVE },
  /** Pasted provider credentials (a `PATCH` with `credentials`): the grant is theirs now. */
  replaceCredentials: { from: LIVE, oauth: "connected", replacesCredentials: true },
  pause: { from: LIVE, to: "paused" },
  /** Back to active, also after a credential error: held and blocked jobs are queued again. */
  resume: { from: LIVE, to: "active" },
  rotateSecret: { from: LIVE },
  rotateCrmSecret: { from: LIVE },
  revokePreviousSecret: { from: LIVE },
  /** For good: deliveries answer 410, jobs are cancelled, the clean-up revokes the grant. */
  disable: { from: LIVE, to: "disabled" },
  /** A new grant from the consent screen: a credential error ends with it. */
  reconnect: {
    from: LIVE,
    to: { credential_error: "active" },
    oauth: "connected",
    replacesCredentials: true,
  },
  /** `POST /sync`: registration and reconciliation now. */
  syncNow: { from: LIVE },
  /** A provider-sync job is made (a sync, a rotation, the sweep; a disconnect's removal, on a disabled connection). */
  requestSync: { from: ANY },

  // --- what the worker finds out ---
  /** A provider answered 401/403 to the connection's credentials. */
  refuseCredentials: { from: ["active", "credential_error"], to: "credential_error" },
  /** A refresh was answered `invalid_grant`: the owner must consent again. */
  requireReauthorization: {
    from: LIVE,
    to: { active: "credential_error" },
    oauth: "reauthorization_required",
  },
  /** A refreshed token pair, stored before it is used (invariant 9). */
  storeRefreshedToken: { from: ANY, oauth: "connected" },
  /** The refresh lease (taking, releasing) and a failed refresh's error code. */
  leaseRefresh: { from: ANY },
  recordRefreshFailure: { from: ANY },
  recordRegistration: { from: ANY },
  recordReconciliation: { from: ANY },
  /** The reconciliation sweep moves an active connection's tick forward. */
  scheduleReconciliation: { from: ["active"] },
  /** A disabled connection's clean-up: taken, failed (retried later), or done (tokens deleted). */
  takeCleanUp: { from: ["disabled"] },
  recordCleanUpFailure: { from: ["disabled"] },
  finishCleanUp: { from: ["disabled"], oauth: "not_connected" },
  /** `secrets:reencrypt`: an envelope sealed again under the current key. */
  reseal: { from: ANY },
} as const satisfies Record<string, TransitionDefinition>;

export type TransitionName = keyof typeof TRANSITIONS;

/** An impossible transition: the connection is not in a status the transition may start from. */
export class ConnectionTransitionRefused extends AppError {
  constructor(
    readonly transition: TransitionName,
    readonly from: ConnectionStatus,
  ) {
    super(
      409,
      from === "disabled" ? "connection_disabled" : "connection_state_conflict",
      from === "disabled"
        ? "The connection is disabled; its history is kept, nothing more changes."
        : `The connection is ${from}: ${transition} is not possible now.`,
    );
  }
}

/** The connection's state as far as transitions look at it. */
export interface ConnectionState {
  status: ConnectionStatus;
  oauthStatus: OAuthStatus;
}

/** The state after `transition`, or a refusal. */
export function next(transition: TransitionName, from: ConnectionState): ConnectionState {
  const definition: TransitionDefinition = TRANSITIONS[transition];
  if (!definition.from.includes(from.status)) throw new ConnectionTransitionRefused(transition, from.status);
  const to = definition.to;
  const status =
    to === undefined ? from.status : typeof to === "string" ? to : (to[from.status] ?? from.status);
  return { status, oauthStatus: definition.oauth ?? from.oauthStatus };
}

/**
 * What taking `transition` from `from` does at once to the connection's jobs: the ENTERING effect
 * of the status the transition names for `from` (its `to`), none when it names none. So a resume
 * (`to: "active"`, also from active) queues the held and blocked jobs again, a reconnect only from a
 * credential error (`to: { credential_error: "active" }`), and a disable cancels the unfinished ones.
 */
export function jobEffect(transition: TransitionName, from: ConnectionStatus): JobEffect | undefined {
  const to = (TRANSITIONS[transition] as TransitionDefinition).to;
  const entered = typeof to === "string" ? to : to?.[from];
  return entered === undefined ? undefined : ENTERING[STATES[entered].jobs];
}

/** Whether `transition` may start from `status` (for set-based statements that filter on it). */
export function allowedFrom(transition: TransitionName): readonly ConnectionStatus[] {
  return TRANSITIONS[transition].from;
}

/** The alert a change of state opens or resolves (api.md "Alerts"): derived, never stored here. */
export type ConnectionAlertChange =
  | { kind: "raise"; type: "connection.reauthorization_required" | "connection.credential_error" }
  | {
      kind: "clear";
      type: "connection.reauthorization_required" | "connection.credential_error" | "connection.silent";
    };

/**
 * The alerts a change from `before` to `after` raises and clears: a refused grant opens
 * `connection.reauthorization_required`, other refused credentials `connection.credential_error`;
 * each resolves when its condition ends (a reconnect, a resume), and disabling resolves every
 * connection alert.
 */
export function alertChanges(before: ConnectionState, after: ConnectionState): ConnectionAlertChange[] {
  const changes: ConnectionAlertChange[] = [];
  const reauth = (state: ConnectionState) => state.oauthStatus === "reauthorization_required";
  const refused = (state: ConnectionState) => state.status === "credential_error";
  if (reauth(after) && !reauth(before) && after.status !== "disabled") {
    changes.push({ kind: "raise", type: "connection.reauthorization_required" });
  } else if (reauth(before) && !reauth(after)) {
    changes.push({ kind: "clear", type: "connection.reauthorization_required" });
  }
  if (refused(after) && !refused(before) && !reauth(after)) {
    changes.push({ kind: "raise", type: "connection.credential_error" });
  } else if (refused(before) && !refused(after)) {
    changes.push({ kind: "clear", type: "connection.credential_error" });
  }
  if (after.status === "disabled" && before.status !== "disabled") {
    for (const type of [
      "connection.reauthorization_required",
      "connection.credential_error",
      "connection.silent",
    ] as const) {
      if (!changes.some((change) => change.type === type)) changes.push({ kind: "clear", type });
    }
  }
  return changes;
}
