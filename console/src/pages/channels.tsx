// Notification channels: add (a webhook's signing secret shown once), test with the outcome shown,
// delete after a confirmation.
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { Channel } from "../api/types";
import { useCanWrite, useSession, useTenantId, useTenantQuery } from "../session";
import { ConfirmButton, ErrorBox, Loaded, Page, ShownOnce, when } from "../ui";

function TestButton({ id }: { id: string }) {
  const test = useMutation({
    mutationFn: () => api.post("/admin/notification-channels/{id}/test", { path: { id }, body: {} }),
  });
  return (
    <>
      <button type="button" disabled={test.isPending} onClick={() => test.mutate()}>
        {test.isPending ? "Testing…" : "Send a test"}
      </button>
      {test.data && (
        <span role="status">
          {test.data.delivered ? "Delivered" : "Not delivered"}
          {test.data.status ? ` (HTTP ${test.data.status})` : ""}
          {test.data.error ? `: ${test.data.error}` : ""}
        </span>
      )}
      {test.isError && <ErrorBox error={test.error} />}
    </>
  );
}

function AddChannel() {
  const client = useQueryClient();
  const { user } = useSession();
  const tenantId = useTenantId();
  const [type, setType] = useState<Channel["type"]>("webhook");
  const [target, setTarget] = useState("");
  const add = useMutation({
    mutationFn: () =>
      api.post("/admin/notification-channels", {
        body: {
          type,
          ...(type === "email" ? { address: target } : { url: target }),
          ...(user.role === "operator" && tenantId ? { tenantId } : {}),
        },
      }),
    onSuccess: () => {
      setTarget("");
      void client.invalidateQueries({ queryKey: ["/admin/notification-channels"] });
    },
  });
  return (
    <form
      className="inline-form"
      aria-label="Add a channel"
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate();
      }}
    >
      <label>
        Type
        <select value={type} onChange={(e) => setType(e.target.value as Channel["type"])}>
          <option value="webhook">Webhook</option>
          <option value="slack">Slack</option>
          <option value="email">E-mail</option>
        </select>
      </label>
      <label>
        {type === "email" ? "Address" : "URL"}
        <input
          required
          type={type === "email" ? "email" : "url"}
          value={target}
          onChange={(e) => setTarget(e.target.value)}
        />
      </label>
      <button type="submit" disabled={add.isPending}>
        Add channel
      </button>
      {add.data?.secrets && <ShownOnce name="Signing secret" value={add.data.secrets.signingSecret} />}
      {add.isError && <ErrorBox error={add.error} />}
    </form>
  );
}

export default function Channels() {
  const tenant = useTenantQuery();
  const canWrite = useCanWrite();
  const client = useQueryClient();
  const channels = useQuery({
    queryKey: ["/admin/notification-channels", tenant],
    queryFn: () => api.get("/admin/notification-channels", { query: tenant }),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete("/admin/notification-channels/{id}", { path: { id } }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["/admin/notification-channels"] }),
  });
  return (
    <Page title="Notification channels">
      {canWrite && <AddChannel />}
      {remove.isError && <ErrorBox error={remove.error} />}
      <Loaded
        query={channels}
        empty="No channels: alerts are only shown here."
        isEmpty={(page) => page.items.length === 0}
      >
        {(page) => (
          <ul className="cards">
            {page.items.map((c) => (
              <li key={c.id}>
                <p>
                  <strong>{c.type}</strong> <code className="wrap">{c.url ?? c.address}</code> {c.status}
                  {c.tenantId === null ? " · every tenant" : ""} · added {when(c.createdAt)}
                </p>
                {canWrite && (
                  <p>
                    <TestButton id={c.id} />{" "}
                    <ConfirmButton
                      label="Delete"
                      question="Delete this channel?"
                      onConfirm={() => remove.mutate(c.id)}
                    />
                  </p>
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </Page>
  );
}
