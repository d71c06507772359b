// The routes of api.md "Console and users" that the users branch adds (sessions, invitations,
// users). Once they are in docs/openapi.json the generated types take precedence (client.ts).
type Op<Q = never, P = never> = { parameters: { query?: Q; path: P } };
type Id = { id: string };
export interface PendingPaths {
  "/console/api/session": { get: Op; post: Op; delete: Op };
  "/console/api/invitations/accept": { post: Op };
  "/admin/users": { get: Op<{ tenantId?: string; limit?: number; cursor?: string }>; post: Op };
  "/admin/users/{id}": { delete: Op<never, Id> };
  "/admin/users/{id}/invitation": { post: Op<never, Id> };
}
