import type { Role } from "./api-key.js";

/**
 * Who is calling the admin API: an API key or a signed-in console user (exactly one of `keyId` and
 * `userId`), its role, and the tenant a tenant role belongs to.
 */
export interface Principal {
  /** The API key; null for a user's session. */
  keyId: string | null;
  /** The console user; null for an API key. */
  userId: string | null;
  role: Role;
  /** null for operators. */
  tenantId: string | null;
}

/** Every tenant: the scope of operator keys. */
export const PLATFORM = Symbol("platform");

/**
 * The tenants an admin query may touch: one tenant, or every tenant (operators only). Repository
 * methods take it first and put it in every `where`, so forgetting the tenant does not compile.
 */
export type TenantScope = string | typeof PLATFORM;

export function scopeOf(principal: Principal): TenantScope {
  return principal.role === "operator" ? PLATFORM : principal.tenantId!;
}

/** The Prisma `where` fragment of a scope. */
export function tenantWhere(scope: TenantScope): { tenantId?: string } {
  return scope === PLATFORM ? {} : { tenantId: scope };
}

/** A tenant filter for SQL: `$n::uuid IS NULL OR tenant_id = $n` (null: every tenant, operators only). */
export function tenantParam(scope: TenantScope): string | null {
  return scope === PLATFORM ? null : scope;
}
