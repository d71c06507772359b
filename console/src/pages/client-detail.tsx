// One client: its name, time zone and branding (PATCH /admin/clients/{id}, each refused field's reason
// beside it), the defaults its connections inherit before the tenant's (client-defaults.tsx), its
// connections, and delete after a confirmation (409 client_in_use while it has live connections or is
// the tenant's only client: said in words).
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ApiError } from "../api/client";
import type { Client } from "../api/types";
import { useCanWrite, useLink } from "../session";
import { Badge, ConfirmButton, ErrorBox, FieldError, Loaded, Page } from "../ui";
import { ClientDefaults } from "./client-defaults";
import { useConnections } from "./names";

const BRANDING = ["displayName", "logoUrl", "accentColor"] as const;
type Brand = (typeof BRANDING)[number];

function Details({ client, canWrite }: { client: Client; canWrite: boolean }) {
  const queries = useQueryClient();
  const [name, setName] = useState(client.name);
  const [timezone, setTimezone] = useState(client.timezone);
  const [brand, setBrand] = useState<Record<Brand, string>>({
    displayName: client.branding.displayName ?? "",
    logoUrl: client.branding.logoUrl ?? "",
    accentColor: client.branding.accentColor ?? "",
  });
  const save = useMutation({
    mutationFn: () => {
      // Only what changed; an emptied branding field is removed (null).
      const branding = Object.fromEntries(
        BRANDING.filter((field) => brand[field].trim() !== (client.branding[field] ?? "")).map((field) => [
          field,
          brand[field].trim() === "" ? null : brand[field].trim(),
        ]),
      );
      return api.patch("/admin/clients/{id}", {
        path: { id: client.id },
        body: {
          ...(name !== client.name ? { name } : {}),
          ...(timezone !== client.timezone ? { timezone } : {}),
          ...(Object.keys(branding).length > 0 ? { branding } : {}),
        },
      });
    },
    onSuccess: () => void queries.invalidateQueries({ queryKey: ["/admin/clients"] }),
  });
  const field = (label: string, value: string, set: (v: string) => void, error: string, hint?: string) => (
    <label>
      {label}
      {hint && <span className="muted"> ({hint})</span>}
      <input value={value} onChange={(e) => set(e.target.value)} />
      <FieldError error={save.error} field={error} />
    </label>
  );
  return (
    <form
      className="editor"
      aria-label="Client details"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <h2>Name, time zone and branding</h2>
      <fieldset disabled={!canWrite}>
        {field("Client name", name, setName, "name")}
        {field(
          "Time zone",
          timezone,
          setTimezone,
          "timezone",
          "IANA, e.g. America/Chicago: its reports' zone",
        )}
        {field(
          "Display name",
          brand.displayName,
          (v) => setBrand({ ...brand, displayName: v }),
          "branding.displayName",
          "shown in place of Leadgate's name; empty: none",
        )}
        {field(
          "Logo URL",
          brand.logoUrl,
          (v) => setBrand({ ...brand, logoUrl: v }),
          "branding.logoUrl",
          "https://…",
        )}
        {field(
          "Accent color",
          brand.accentColor,
          (v) => setBrand({ ...brand, accentColor: v }),
          "branding.accentColor",
          "#rrggbb",
        )}
        {canWrite && (
          <button type="submit" disabled={save.isPending}>
            Save client
          </button>
        )}
        {save.isSuccess && <p role="status">Client saved.</p>}
        {save.isError && <ErrorBox error={save.error} />}
      </fieldset>
    </form>
  );
}

function Delete({ client }: { client: Client }) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const link = useLink();
  const remove = useMutation({
    mutationFn: () => api.delete("/admin/clients/{id}", { path: { id: client.id } }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ["/admin/clients"] });
      void navigate(link("/clients"));
    },
  });
  const inUse = remove.error instanceof ApiError && remove.error.code === "client_in_use";
  return (
    <div className="actions" role="group" aria-label="Client actions">
      <ConfirmButton
        label="Delete client"
        question={`Delete ${client.name}? Only a client without live connections can go.`}
        disabled={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      {remove.isError && (
        <div role="alert" className="error" data-testid="delete-refused">
          {inUse && (
            <p>
              {client.name} cannot be deleted: it still has connections that are not disabled, or it is the
              tenant&apos;s only client. Move its connections to another client (or delete them) first.
            </p>
          )}
          <ErrorBox error={remove.error} />
        </div>
      )}
    </div>
  );
}

export default function ClientDetail() {
  const { id = "" } = useParams();
  const canWrite = useCanWrite();
  const link = useLink();
  const connections = useConnections();
  const client = useQuery({
    queryKey: ["/admin/clients", id],
    queryFn: () => api.get("/admin/clients/{id}", { path: { id } }),
  });
  return (
    <Page title="Client">
      <Loaded query={client}>
        {(c) => (
          <>
            <h2>{c.name}</h2>
            <h3>Its connections</h3>
            <ul data-testid="client-connections">
              {connections.data?.items
                .filter((connection) => connection.clientId === c.id)
                .map((connection) => (
                  <li key={connection.id}>
                    <Link to={link(`/connections/${connection.id}`)}>{connection.displayName}</Link> (
                    {connection.provider}) <Badge value={connection.status} />
                  </li>
                ))}
            </ul>
            <Details client={c} canWrite={canWrite} />
            <ClientDefaults client={c} canWrite={canWrite} />
            {canWrite && <Delete client={c} />}
          </>
        )}
      </Loaded>
    </Page>
  );
}
