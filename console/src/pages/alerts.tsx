// Alerts: open, acknowledged or resolved (GET /admin/alerts?status), acknowledge and resolve.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import { useCanWrite, useTenantQuery } from "../session";
import { Badge, ErrorBox, Loaded, Page, useSearchParam, when } from "../ui";
import { useConnectionNames } from "./names";

const STATUSES = ["open", "acknowledged", "resolved"] as const;

export default function Alerts() {
  const [statusParam, setStatus] = useSearchParam("status");
  const tenant = useTenantQuery();
  const canWrite = useCanWrite();
  const names = useConnectionNames();
  const client = useQueryClient();
  const status = STATUSES.find((s) => s === statusParam) ?? "open";
  const alerts = useQuery({
    queryKey: ["/admin/alerts", tenant, status],
    queryFn: () => api.get("/admin/alerts", { query: { ...tenant, status } }),
  });
  const settle = useMutation({
    mutationFn: ({ id, to }: { id: string; to: "acknowledge" | "resolve" }) =>
      api.post(to === "acknowledge" ? "/admin/alerts/{id}/acknowledge" : "/admin/alerts/{id}/resolve", {
        path: { id },
        body: {},
      }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["/admin/alerts"] }),
  });
  return (
    <Page title="Alerts">
      <label>
        Status{" "}
        <select value={status} onChange={(e) => setStatus(e.target.value)}>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      {settle.isError && <ErrorBox error={settle.error} />}
      <Loaded query={alerts} empty={`No ${status} alerts.`} isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <ul className="cards">
            {page.items.map((alert) => (
              <li key={alert.id}>
                <p>
                  <Badge value={alert.status} /> <strong>{alert.summary}</strong>
                </p>
                <p className="muted">
                  {alert.type} · {names(alert.connectionId)} · {alert.count}× · since{" "}
                  {when(alert.firstSeenAt)}, last {when(alert.lastSeenAt)}
                </p>
                {canWrite && alert.status !== "resolved" && (
                  <p>
                    {alert.status === "open" && (
                      <button
                        type="button"
                        onClick={() => settle.mutate({ id: alert.id, to: "acknowledge" })}
                      >
                        Acknowledge
                      </button>
                    )}{" "}
                    <button type="button" onClick={() => settle.mutate({ id: alert.id, to: "resolve" })}>
                      Resolve
                    </button>
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
