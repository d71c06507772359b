// Connection names for ids in tables (GET /admin/connections of the tenant in view).
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import { useTenantQuery } from "../session";

export function useConnections() {
  const tenant = useTenantQuery();
  return useQuery({
    queryKey: ["/admin/connections", tenant],
    queryFn: () => api.get("/admin/connections", { query: { ...tenant, limit: 200 } }),
  });
}

export function useConnectionNames(): (id: string | null) => string {
  const connections = useConnections();
  return (id) => {
    if (!id) return "—";
    const found = connections.data?.items.find((c) => c.id === id);
    return found ? `${found.displayName} (${found.provider})` : id.slice(0, 8);
  };
}
