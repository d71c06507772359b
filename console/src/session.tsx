// Who is signed in (GET /console/api/session), the tenant the screens show (?tenantId for an
// operator), the client they are narrowed to (?clientId, anyone), and whether the user may write (a
// tenant-viewer only reads).
import { createContext, useContext } from "react";
import { useSearchParams } from "react-router";
import type { Session } from "./api/types";

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in screen");
  return session;
}

/** Write buttons are hidden from a tenant-viewer (the API refuses its writes anyway). */
export function useCanWrite(): boolean {
  return useSession().user.role !== "tenant-viewer";
}

/** The tenant the screens are narrowed to: an operator's ?tenantId, a tenant user's own tenant. */
export function useTenantId(): string | undefined {
  const [params] = useSearchParams();
  const { user } = useSession();
  if (user.role !== "operator") return user.tenantId ?? undefined;
  return params.get("tenantId") ?? undefined;
}

/** `?tenantId` for the API's list and report routes (only operators send it). */
export function useTenantQuery(): { tenantId?: string } {
  const { user } = useSession();
  const tenantId = useTenantId();
  return user.role === "operator" && tenantId ? { tenantId } : {};
}

/** `?clientId` for the routes that narrow to one client (connections, leads, speed to lead); {} for all. */
export function useClientQuery(): { clientId?: string } {
  const [params] = useSearchParams();
  const clientId = params.get("clientId");
  return clientId ? { clientId } : {};
}

/** A console link that keeps the operator's tenant choice and the client picked. */
export function useLink(): (path: string) => string {
  const [params] = useSearchParams();
  const kept = new URLSearchParams();
  for (const name of ["tenantId", "clientId"]) {
    const value = params.get(name);
    if (value) kept.set(name, value);
  }
  const text = kept.toString();
  return (path) => (text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path);
}
