// Clients: the businesses the tenant serves (GET /admin/clients), with how many connections each has,
// and a new one created (POST /admin/clients; the API's reasons shown beside the fields). Each opens
// to its own screen (client-detail.tsx).
import { useState } from "react";
import { Link } from "react-router";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import { useCanWrite, useLink, useSession, useTenantId } from "../session";
import { ErrorBox, FieldError, Loaded, Page, when } from "../ui";
import { useClients, useConnections } from "./names";

function CreateClient() {
  const { user } = useSession();
  const tenantId = useTenantId();
  const queries = useQueryClient();
  const [name, setName] = useState("");
  const [timezone, setTimezone] = useState("");
  const create = useMutation({
    mutationFn: () =>
      api.post("/admin/clients", {
        body: {
          name,
          ...(timezone.trim() ? { timezone: timezone.trim() } : {}),
          ...(user.role === "operator" ? { tenantId } : {}),
        },
      }),
    onSuccess: () => {
      setName("");
      setTimezone("");
      void queries.invalidateQueries({ queryKey: ["/admin/clients"] });
    },
  });
  if (user.role === "operator" && !tenantId) return <p>Choose a tenant above to add a client to it.</p>;
  return (
    <form
      className="inline-form"
      aria-label="Add a client"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate();
      }}
    >
      <label>
        Client name
        <input value={name} onChange={(e) => setName(e.target.value)} />
        <FieldError error={create.error} field="name" />
      </label>
      <label>
        Time zone (optional, e.g. America/Chicago)
        <input value={timezone} onChange={(e) => setTimezone(e.target.value)} />
        <FieldError error={create.error} field="timezone" />
      </label>
      <button type="submit" disabled={create.isPending}>
        Add client
      </button>
      {create.data && <p role="status">Client “{create.data.client.name}” added.</p>}
      {create.isError && <ErrorBox error={create.error} />}
    </form>
  );
}

export default function Clients() {
  const clients = useClients();
  const connections = useConnections();
  const canWrite = useCanWrite();
  const link = useLink();
  const counted = (id: string) =>
    connections.data?.items.filter((c) => c.clientId === id && c.status !== "disabled").length;
  return (
    <Page title="Clients">
      <p className="muted">
        The businesses this agency serves. Each connection belongs to one client, and inherits its defaults
        before the tenant&apos;s.
      </p>
      {canWrite && <CreateClient />}
      <Loaded query={clients} empty="No clients yet." isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Connections</th>
                  <th scope="col">Time zone</th>
                  <th scope="col">Shown as</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((client) => (
                  <tr key={client.id}>
                    <td>
                      <Link to={link(`/clients/${client.id}`)}>{client.name}</Link>
                    </td>
                    <td>{counted(client.id) ?? "…"}</td>
                    <td>{client.timezone}</td>
                    <td>
                      {client.branding.accentColor && (
                        <span className="swatch" style={{ background: client.branding.accentColor }} />
                      )}{" "}
                      {client.branding.displayName ?? "—"}
                    </td>
                    <td>{when(client.createdAt)}</td>
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
