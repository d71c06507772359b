// Names for ids in tables: connections (GET /admin/connections), clients (GET /admin/clients) and
// users (GET /admin/users) of the tenant in view, and the signed-in user; the installation's
// providers (GET /admin/providers).
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import { useSession, useTenantQuery } from "../session";

/** The tenant's connections; `narrow`: only those of the client picked (?clientId), if one is. */
export function useConnections(narrow: { clientId?: string } = {}) {
  const tenant = useTenantQuery();
  return useQuery({
    queryKey: ["/admin/connections", tenant, narrow],
    queryFn: () => api.get("/admin/connections", { query: { ...tenant, ...narrow, limit: 200 } }),
  });
}

/** The tenant's clients (an operator's: the tenant picked, else every tenant's). */
export function useClients() {
  const tenant = useTenantQuery();
  return useQuery({
    queryKey: ["/admin/clients", tenant],
    queryFn: () => api.get("/admin/clients", { query: { ...tenant, limit: 200 } }),
  });
}

export function useClientNames(): (id: string | null | undefined) => string {
  const clients = useClients();
  return (id) => {
    if (!id) return "—";
    return clients.data?.items.find((c) => c.id === id)?.name ?? id.slice(0, 8);
  };
}

export function useConnectionNames(): (id: string | null) => string {
  const connections = useConnections();
  return (id) => {
    if (!id) return "—";
    const found = connections.data?.items.find((c) => c.id === id);
    return found ? `${found.displayName} (${found.provider})` : id.slice(0, 8);
  };
}

/** A user's e-mail for an id: the tenant's users, and oneself (an operator is in no tenant's list). */
export function useUserNames(): (id: string) => string {
  const tenant = useTenantQuery();
  const { user: me } = useSession();
  const users = useQuery({
    queryKey: ["/admin/users", tenant, "names"],
    queryFn: () => api.get("/admin/users", { query: { ...tenant, limit: 200 } }),
  });
  return (id) =>
    id === me.id ? me.email : (users.data?.items.find((u) => u.id === id)?.email ?? `user ${id.slice(0, 8)}`);
}

/** The providers this installation has (GET /admin/providers): the console names none itself. */
export function useProviders() {
  return useQuery({
    queryKey: ["/admin/providers"],
    queryFn: () => api.get("/admin/providers"),
    staleTime: Infinity,
  });
}

/** One provider's entry, once the list has loaded. */
export function useProvider(id: string) {
  return useProviders().data?.items.find((provider) => provider.id === id);
}
