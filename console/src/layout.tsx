// The signed-in frame: the session check (no session: the sign-in page), the navigation, the
// operator's tenant picker, the client picker (a tenant's clients: ?clientId), changing one's password, sign out.
import { useEffect } from "react";
import { NavLink, Navigate, Outlet, useLocation, useNavigate, useSearchParams } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ApiError, setCsrfToken } from "./api/client";
import { SessionContext, useLink, useSession, useTenantId, useTenantQuery } from "./session";
import { useClients } from "./pages/names";
import { ErrorBox } from "./ui";

const SCREENS: [string, string][] = [
  ["overview", "Overview"],
  ["clients", "Clients"],
  ["connections", "Connections"],
  ["leads", "Leads"],
  ["failures", "Failures"],
  ["alerts", "Alerts"],
  ["channels", "Notification channels"],
  ["users", "Users"],
  ["audit", "Audit"],
];

export function useSessionQuery() {
  return useQuery({
    queryKey: ["session"],
    queryFn: async () => {
      const session = await api.get("/console/api/session");
      setCsrfToken(session.csrfToken);
      return session;
    },
    staleTime: 60_000,
  });
}

function TenantPicker() {
  const [params, setParams] = useSearchParams();
  const tenants = useQuery({
    queryKey: ["/admin/tenants"],
    queryFn: () => api.get("/admin/tenants", { query: { limit: 200 } }),
  });
  return (
    <label className="tenant-picker">
      Tenant{" "}
      <select
        value={params.get("tenantId") ?? ""}
        onChange={(event) => {
          const next = new URLSearchParams(params);
          if (event.target.value) next.set("tenantId", event.target.value);
          else next.delete("tenantId");
          next.delete("clientId"); // another tenant's clients
          next.delete("cursor");
          setParams(next);
        }}
      >
        <option value="">All tenants</option>
        {tenants.data?.items.map((tenant) => (
          <option key={tenant.id} value={tenant.id}>
            {tenant.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Narrows the connections, leads and speed to lead to one client of the tenant in view. */
function ClientPicker() {
  const [params, setParams] = useSearchParams();
  const tenant = useTenantQuery();
  const clients = useClients();
  return (
    <label className="tenant-picker">
      Client{" "}
      <select
        value={params.get("clientId") ?? ""}
        onChange={(event) => {
          const next = new URLSearchParams(params);
          if (event.target.value) next.set("clientId", event.target.value);
          else next.delete("clientId");
          next.delete("cursor");
          setParams(next);
        }}
        disabled={clients.isPending}
        key={tenant.tenantId ?? "own"}
      >
        <option value="">All clients</option>
        {clients.data?.items.map((client) => (
          <option key={client.id} value={client.id}>
            {client.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function Frame() {
  const session = useSession();
  const tenantId = useTenantId();
  const link = useLink();
  const navigate = useNavigate();
  const client = useQueryClient();
  const signedOut = () => {
    setCsrfToken(undefined);
    client.clear();
    void navigate("/sign-in");
  };
  // Only a sign-out the server confirmed (or a session already gone) leaves: on any other error the
  // cookie may still be valid, so the page says so instead of pretending.
  const signOut = useMutation({
    mutationFn: () => api.delete("/console/api/session"),
    onSuccess: signedOut,
    onError: (error) => {
      if (error instanceof ApiError && error.status === 401) signedOut();
    },
  });
  return (
    <>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header>
        <strong className="brand">Leadgate</strong>
        <nav aria-label="Screens">
          {SCREENS.map(([path, name]) => (
            <NavLink key={path} to={link(`/${path}`)}>
              {name}
            </NavLink>
          ))}
        </nav>
        <div className="who">
          {session.user.role === "operator" && <TenantPicker />}
          {(session.user.role !== "operator" || tenantId) && <ClientPicker />}
          <span>
            {session.user.email} ({session.user.role})
          </span>
          <NavLink to={link("/password")}>Change password</NavLink>
          <button type="button" disabled={signOut.isPending} onClick={() => signOut.mutate()}>
            Sign out
          </button>
          {signOut.isError && <ErrorBox error={signOut.error} />}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}

export function Layout() {
  const session = useSessionQuery();
  const location = useLocation();
  useEffect(() => {
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [location.pathname]);
  if (session.isPending) return <p aria-busy="true">Loading…</p>;
  if (session.isError) {
    if (session.error instanceof ApiError && session.error.status === 401) {
      const next = `${location.pathname}${location.search}`;
      return <Navigate to={`/sign-in?next=${encodeURIComponent(next)}`} replace />;
    }
    return <ErrorBox error={session.error} />;
  }
  return (
    <SessionContext.Provider value={session.data}>
      <Frame />
    </SessionContext.Provider>
  );
}
