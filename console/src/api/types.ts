// What the console reads of the answers (api.md): the document gives paths and parameters; the
// answer bodies are described in prose there, so the fields used are written here.
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
export type Role = "operator" | "tenant-admin" | "tenant-viewer";
export interface SessionUser {
  id: string;
  email: string;
  role: Role;
  tenantId: string | null;
}
export interface Session {
  user: SessionUser;
  csrfToken: string;
}
export interface Tenant {
  id: string;
  name: string;
}
export interface Overview {
  leads24h: number;
  receipts24h: number;
  failed24h: number;
  openAlerts: number;
  connections: { total: number; attention: number };
}
export interface SpeedFigures {
  connectionId: string;
  leads: number;
  responded: number;
  unanswered: number;
  medianSeconds: number | null;
  p90Seconds: number | null;
  withinTargetShare: number | null;
  targetSeconds: number | null;
  autoShare: number | null;
}
export interface SpeedReport {
  window: { from: string; to: string };
  items: SpeedFigures[];
  overall: Omit<SpeedFigures, "connectionId">;
  series?: { day: string; leads: number; medianSeconds: number | null; p90Seconds: number | null }[];
}
export interface AutoResponse {
  enabled: boolean;
  text: string;
  afterHoursText?: string;
  delaySeconds?: number;
}
export interface BusinessHours {
  timezone: string;
  weekly: Record<string, [string, string][]>;
}
export interface Connection {
  id: string;
  tenantId: string;
  provider: "yelp" | "thumbtack" | "staticforms";
  externalAccountId: string;
  displayName: string;
  status: string;
  webhookUrl: string;
  oauth: { status: string; lastError: string | null };
  registration: { status: string; lastError: string | null };
  reconciliation: { status: string; lastRunAt: string | null; lastError: string | null };
  settings: { autoResponse?: AutoResponse; businessHours?: BusinessHours | null };
  effectiveSettings?: { autoResponse?: AutoResponse | null; businessHours?: BusinessHours | null };
  createdAt: string;
}
export interface Lead {
  id: string;
  tenantId: string;
  connectionId: string;
  provider: string;
  externalLeadId: string;
  status: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  createdAt: string;
  firstResponse: { at: string; by: "auto" | "business"; seconds: number } | null;
  messages?: {
    externalId: string;
    direction: string;
    author: string | null;
    text: string | null;
    sentAt: string | null;
  }[];
}
export interface Receipt {
  id: string;
  kind: string;
  status: string;
  occurredAt: string;
  receivedAt: string;
  source: string;
}
export interface Attempt {
  number: number;
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  errorCode: string | null;
  durationMs: number | null;
}
export interface Job {
  id: string;
  tenantId: string;
  connectionId: string | null;
  receiptId: string | null;
  operation: string;
  status: string;
  attempts: number;
  lastErrorCode: string | null;
  createdAt: string;
  updatedAt: string;
  attemptHistory?: Attempt[];
}
export interface SummaryGroup {
  connectionId: string | null;
  operation: string;
  errorCode: string | null;
  count: number;
  oldest: string;
  newest: string;
}
export interface Replay {
  id: string;
  status: string;
  matched: number;
  queued: number;
  skipped: number;
  succeeded: number;
  failed: number;
}
export interface Alert {
  id: string;
  type: string;
  status: "open" | "acknowledged" | "resolved";
  connectionId: string | null;
  errorCode: string | null;
  count: number;
  firstSeenAt: string;
  lastSeenAt: string;
  summary: string;
}
export interface Channel {
  id: string;
  type: "webhook" | "slack" | "email";
  url?: string | null;
  address?: string | null;
  status?: string;
  tenantId: string | null;
  createdAt: string;
}
export interface User {
  id: string;
  email: string;
  role: Role;
  tenantId: string | null;
  createdAt: string;
  disabledAt: string | null;
  /** False until the invitation is accepted. */
  accepted: boolean;
}
export interface AuditEntry {
  id: string;
  action: string;
  targetType: string | null;
  targetId: string | null;
  createdAt: string;
  apiKeyId: string | null;
  userId: string | null;
}

type Invitation = { url: string; expiresAt: string };
/** What each route answers, as far as the console reads it (client.ts types each call by it). */
export interface Answers {
  get: {
    "/console/api/session": Session;
    "/admin/tenants": Page<Tenant>;
    "/admin/overview": Overview;
    "/admin/speed-to-lead": SpeedReport;
    "/admin/alerts": Page<Alert>;
    "/admin/connections": Page<Connection>;
    "/admin/connections/{id}": Connection;
    "/admin/leads": Page<Lead>;
    "/admin/leads/{id}": Lead;
    "/admin/receipts": Page<Receipt>;
    "/admin/jobs": Page<Job>;
    "/admin/jobs/{id}": Job;
    "/admin/jobs/summary": { groups: SummaryGroup[] };
    "/admin/replays/{id}": Replay;
    "/admin/notification-channels": Page<Channel>;
    "/admin/users": Page<User>;
    "/admin/audit": Page<AuditEntry>;
  };
  post: {
    "/console/api/session": Session;
    "/admin/connections/oauth": { authorizeUrl: string; expiresAt: string };
    "/admin/connections/{id}/rotate-secret": { secrets: Record<string, string> };
    "/admin/connections/{id}/reply-preview": { text: string; variant: string; sendAt: string };
    "/admin/replays": { id?: string; matched: number };
    "/admin/notification-channels": { channel: Channel; secrets?: { signingSecret: string } };
    "/admin/notification-channels/{id}/test": { delivered: boolean; status?: number; error?: string };
    "/admin/users": { user: User; invitation: Invitation };
    "/admin/users/{id}/invitation": { invitation: Invitation };
  };
  patch: Record<never, never>;
  delete: Record<never, never>;
}
