// Connections: each one's OAuth, registration and reconciliation status at a glance, and "Connect
// with …" for every provider this installation connects by OAuth (GET /admin/providers; POST
// /admin/connections/oauth, the console as returnUrl). The client picked in the header narrows the list
// (?clientId) and is the new connection's client.
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { useMutation } from "@tanstack/react-query";
import { api } from "../api/client";
import type { OAuthProvider } from "../api/types";
import { useCanWrite, useClientQuery, useLink, useSession, useTenantId } from "../session";
import { Badge, ErrorBox, Loaded, Page } from "../ui";
import { useClientNames, useConnections, useProviders } from "./names";

function Connect() {
  const tenantId = useTenantId();
  const { user } = useSession();
  const client = useClientQuery();
  const providers = useProviders();
  const oauth = providers.data?.items.filter((p) => p.connect === "oauth") ?? [];
  const [chosen, setProvider] = useState<string>();
  const provider = oauth.find((p) => p.id === chosen) ?? oauth[0];
  const [externalAccountId, setAccount] = useState("");
  const [displayName, setName] = useState("");
  const connect = useMutation({
    mutationFn: () => {
      const back = new URL("/console/connections", window.location.origin);
      if (user.role === "operator" && tenantId) back.searchParams.set("tenantId", tenantId);
      if (client.clientId) back.searchParams.set("clientId", client.clientId);
      return api.post("/admin/connections/oauth", {
        body: {
          provider: provider!.id as OAuthProvider, // a provider that connects by OAuth (the list says so)
          externalAccountId,
          displayName,
          returnUrl: back.toString(),
          ...client,
          ...(user.role === "operator" ? { tenantId } : {}),
        },
      });
    },
    onSuccess: (answer) => window.location.assign(answer.authorizeUrl),
  });
  if (user.role === "operator" && !tenantId)
    return <p>Choose a tenant above to connect an account for it.</p>;
  if (!provider) return null; // no provider connects by OAuth here (or the list is loading)
  return (
    <form
      className="inline-form"
      aria-label="Connect an account"
      onSubmit={(event) => {
        event.preventDefault();
        connect.mutate();
      }}
    >
      <label>
        Provider
        <select value={provider.id} onChange={(e) => setProvider(e.target.value)}>
          {oauth.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Business id at the provider
        <input required value={externalAccountId} onChange={(e) => setAccount(e.target.value)} />
      </label>
      <label>
        Name
        <input required value={displayName} onChange={(e) => setName(e.target.value)} />
      </label>
      <button type="submit" disabled={connect.isPending}>
        Connect with {provider.name}
      </button>
      {connect.isError && <ErrorBox error={connect.error} />}
    </form>
  );
}

export default function Connections() {
  const connections = useConnections(useClientQuery());
  const clientName = useClientNames();
  const canWrite = useCanWrite();
  const link = useLink();
  const [params] = useSearchParams();
  const status = params.get("status");
  return (
    <Page title="Connections">
      {status === "connected" && <p role="status">The account is connected.</p>}
      {status === "error" && <p role="alert">The account was not connected: {params.get("error")}.</p>}
      {canWrite && <Connect />}
      <Loaded query={connections} empty="No connections yet." isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Client</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Status</th>
                  <th scope="col">OAuth</th>
                  <th scope="col">Registration</th>
                  <th scope="col">Reconciliation</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <Link to={link(`/connections/${c.id}`)}>{c.displayName}</Link>
                    </td>
                    <td>{clientName(c.clientId)}</td>
                    <td>{c.provider}</td>
                    <td>
                      <Badge value={c.status} />
                    </td>
                    <td>
                      <Badge value={c.oauth.status} />
                    </td>
                    <td>
                      <Badge value={c.registration.status} />
                    </td>
                    <td>
                      <Badge value={c.reconciliation.status} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </Page>
  );
}
