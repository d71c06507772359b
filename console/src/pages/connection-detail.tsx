// One connection: its status, the actions (pause, resume, sync, rotate the secret — shown once —,
// delete after a confirmation), its client (moved to another of the tenant's clients: PATCH clientId)
// and the reply template editor (reply-template.tsx).
import { useState } from "react";
import { useNavigate, useParams } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { Connection } from "../api/types";
import { useCanWrite, useLink } from "../session";
import { Badge, ConfirmButton, ErrorBox, Loaded, Page, ShownOnce, when } from "../ui";
import { useClientNames, useClients, useProvider } from "./names";
import { ReplyTemplate } from "./reply-template";

type Action = "pause" | "resume" | "sync" | "rotate-secret";
const PATHS = {
  pause: "/admin/connections/{id}/pause",
  resume: "/admin/connections/{id}/resume",
  sync: "/admin/connections/{id}/sync",
  "rotate-secret": "/admin/connections/{id}/rotate-secret",
} as const;

/** The first reply's template, for a provider whose inbox Leadgate replies in (GET /admin/providers). */
function Replies({ connection, canWrite }: { connection: Connection; canWrite: boolean }) {
  const provider = useProvider(connection.provider);
  return provider?.replies ? (
    <ReplyTemplate key={connection.id} connection={connection} canWrite={canWrite} />
  ) : null;
}

/** The connection's client, and (for a writer) a move to another client of its tenant. */
function ClientOf({ connection, canWrite }: { connection: Connection; canWrite: boolean }) {
  const client = useQueryClient();
  const name = useClientNames();
  const clients = useClients();
  const [chosen, setChosen] = useState(connection.clientId ?? "");
  const move = useMutation({
    mutationFn: (clientId: string) =>
      api.patch("/admin/connections/{id}", { path: { id: connection.id }, body: { clientId } }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["/admin/connections"] }),
  });
  const mine = clients.data?.items.filter((c) => c.tenantId === connection.tenantId) ?? [];
  if (!canWrite) return <>{name(connection.clientId)}</>;
  return (
    <form
      className="inline-form"
      aria-label="Move to another client"
      onSubmit={(event) => {
        event.preventDefault();
        move.mutate(chosen);
      }}
    >
      <label>
        Client
        <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
          {mine.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={move.isPending || chosen === connection.clientId}>
        Move to this client
      </button>
      {move.isSuccess && chosen === connection.clientId && (
        <p role="status">Moved to {name(connection.clientId)}: it inherits that client's defaults.</p>
      )}
      {move.isError && <ErrorBox error={move.error} />}
    </form>
  );
}

function Actions({ connection }: { connection: Connection }) {
  const provider = useProvider(connection.provider);
  const client = useQueryClient();
  const navigate = useNavigate();
  const link = useLink();
  const [secrets, setSecrets] = useState<Record<string, string> | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const path = { id: connection.id };
  const act = useMutation({
    mutationFn: (action: Action) => api.post(PATHS[action], { path, body: {} }),
    onSuccess: (answer, action) => {
      setDone(
        action === "sync"
          ? "Sync queued."
          : action === "rotate-secret"
            ? "Secret rotated."
            : `Connection ${action}d.`,
      );
      if ("secrets" in answer) setSecrets(answer.secrets);
      void client.invalidateQueries({ queryKey: ["/admin/connections"] });
    },
  });
  const remove = useMutation({
    mutationFn: () => api.delete("/admin/connections/{id}", { path }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ["/admin/connections"] });
      void navigate(link("/connections"));
    },
  });
  const disabled = connection.status === "disabled";
  return (
    <div className="actions" role="group" aria-label="Connection actions">
      {connection.status === "paused" ? (
        <button type="button" disabled={act.isPending} onClick={() => act.mutate("resume")}>
          Resume
        </button>
      ) : (
        <button type="button" disabled={act.isPending || disabled} onClick={() => act.mutate("pause")}>
          Pause
        </button>
      )}
      {provider?.sync && (
        <button type="button" disabled={act.isPending || disabled} onClick={() => act.mutate("sync")}>
          Sync now
        </button>
      )}
      <button type="button" disabled={act.isPending || disabled} onClick={() => act.mutate("rotate-secret")}>
        Rotate secret
      </button>
      <ConfirmButton
        label="Delete"
        question="Delete this connection? Its webhook stops working; its history is kept."
        disabled={disabled}
        onConfirm={() => remove.mutate()}
      />
      {done && <p role="status">{done}</p>}
      {secrets &&
        Object.entries(secrets).map(([name, value]) => <ShownOnce key={name} name={name} value={value} />)}
      {act.isError && <ErrorBox error={act.error} />}
      {remove.isError && <ErrorBox error={remove.error} />}
    </div>
  );
}

export default function ConnectionDetail() {
  const { id = "" } = useParams();
  const canWrite = useCanWrite();
  const connection = useQuery({
    queryKey: ["/admin/connections", id],
    queryFn: () => api.get("/admin/connections/{id}", { path: { id } }),
  });
  return (
    <Page title="Connection">
      <Loaded query={connection}>
        {(c) => (
          <>
            <h2>{c.displayName}</h2>
            <dl className="facts">
              <dt>Provider</dt>
              <dd>
                {c.provider} · {c.externalAccountId}
              </dd>
              <dt>Client</dt>
              <dd data-testid="connection-client">
                <ClientOf connection={c} canWrite={canWrite} />
              </dd>
              <dt>Status</dt>
              <dd>
                <Badge value={c.status} />
              </dd>
              <dt>OAuth</dt>
              <dd>
                <Badge value={c.oauth.status} /> {c.oauth.lastError}
              </dd>
              <dt>Registration</dt>
              <dd>
                <Badge value={c.registration.status} /> {c.registration.lastError}
              </dd>
              <dt>Reconciliation</dt>
              <dd>
                <Badge value={c.reconciliation.status} /> last run {when(c.reconciliation.lastRunAt)}{" "}
                {c.reconciliation.lastError}
              </dd>
              <dt>Webhook URL</dt>
              <dd>
                <code className="wrap">{c.webhookUrl}</code>
              </dd>
            </dl>
            {canWrite && <Actions connection={c} />}
            <Replies connection={c} canWrite={canWrite} />
          </>
        )}
      </Loaded>
    </Page>
  );
}
