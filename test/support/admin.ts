import { randomBytes } from "node:crypto";
import { fixture } from "./fixtures.js";
import { post } from "./http.js";

/** The bootstrap operator key the admin tests start the API with (LEADGATE_BOOTSTRAP_OPERATOR_KEY). */
export const OPERATOR_KEY = "test-operator-key-0123456789abcdef";

export interface AdminAnswer {
  status: number;
  /** The parsed JSON body (undefined for an empty body). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests assert its fields
  /** The raw body, for "contains no secret" checks. */
  text: string;
  headers: Headers;
}

/** Calls the admin API as a client would: JSON over HTTP with `Authorization: Bearer <key>`. */
export async function call(
  baseUrl: string,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<AdminAnswer> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

/** An admin client bound to one key. */
export function adminAs(baseUrl: string, key: string | undefined) {
  return {
    get: (path: string) => call(baseUrl, key, "GET", path),
    post: (path: string, body?: unknown) => call(baseUrl, key, "POST", path, body),
    patch: (path: string, body?: unknown) => call(baseUrl, key, "PATCH", path, body),
    delete: (path: string) => call(baseUrl, key, "DELETE", path),
  };
}

export type Admin = ReturnType<typeof adminAs>;

/** One attempt of GET /admin/jobs/{id}'s `attemptHistory`, as JSON. */
export interface AttemptJson {
  number: number;
  startedAt: string;
  finishedAt: string | null;
  outcome: string | null;
  errorCode: string | null;
  durationMs: number | null;
}

/** A job's attempt history as GET /admin/jobs/{id} answers it, oldest first (throws unless 200). */
export async function attemptHistory(admin: Admin, jobId: string): Promise<AttemptJson[]> {
  const view = await admin.get(`/admin/jobs/${jobId}`);
  if (view.status !== 200) throw new Error(`GET /admin/jobs/${jobId} answered ${view.status}: ${view.text}`);
  return view.body.attemptHistory as AttemptJson[];
}

/** A tenant created through the admin API, with its first tenant-admin key. */
export async function createTenant(baseUrl: string, name = `agency-${randomBytes(3).toString("hex")}`) {
  const created = await adminAs(baseUrl, OPERATOR_KEY).post("/admin/tenants", { name });
  if (created.status !== 201) throw new Error(`tenant not created: ${created.status} ${created.text}`);
  return {
    tenantId: created.body.tenant.id as string,
    keyId: created.body.apiKey.id as string,
    key: created.body.apiKey.key as string,
    admin: adminAs(baseUrl, created.body.apiKey.key as string),
  };
}

/** A Static Forms delivery (the recorded fixture) with a submission id of its own. */
export function staticFormsDelivery(submissionId = `sub_${randomBytes(6).toString("hex")}`) {
  const body = fixture("staticforms/form-submitted.json").json as { data: Record<string, unknown> };
  return { ...body, data: { ...body.data, submissionId } };
}

/**
 * A Static Forms connection of `admin`'s tenant (bearer auth) whose CRM deliveries go to
 * `crmUrl + path`, and `deliver(submissionId?, apiUrl?)` posting a delivery to it (to `apiUrl`,
 * default `baseUrl`).
 */
export async function staticFormsToCrm(admin: Admin, baseUrl: string, crmUrl: string, path: string) {
  const created = await admin.post("/admin/connections", {
    provider: "staticforms",
    externalAccountId: `form${path.replaceAll("/", "-")}`,
    displayName: path,
    inboundAuth: { type: "bearer" },
    settings: { crmDestination: { url: `${crmUrl}${path}` } },
  });
  if (created.status !== 201) throw new Error(`connection not created: ${created.status} ${created.text}`);
  const id = created.body.connection.id as string;
  const token = created.body.secrets.bearerToken as string;
  return {
    id,
    deliver: (submissionId?: string, apiUrl = baseUrl) =>
      post(`${apiUrl}/webhooks/staticforms/${id}`, staticFormsDelivery(submissionId), {
        authorization: `Bearer ${token}`,
      }),
  };
}
