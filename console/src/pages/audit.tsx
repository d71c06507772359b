// Audit: who did what admin action when (GET /admin/audit), newest first, page by page.
import { useSearchParams } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import type { AuditEntry } from "../api/types";
import { useTenantQuery } from "../session";
import { Loaded, Page, when } from "../ui";

/** The user or API key behind an entry (their ids: the audit log names both). */
const actor = (entry: AuditEntry) =>
  entry.userId
    ? `user ${entry.userId.slice(0, 8)}`
    : entry.apiKeyId
      ? `API key ${entry.apiKeyId.slice(0, 8)}`
      : "—";

export default function Audit() {
  const [params, setParams] = useSearchParams();
  const tenant = useTenantQuery();
  const cursor = params.get("cursor") ?? undefined;
  const audit = useQuery({
    queryKey: ["/admin/audit", tenant, cursor],
    queryFn: () => api.get("/admin/audit", { query: { ...tenant, cursor } }),
  });
  return (
    <Page title="Audit">
      <Loaded query={audit} empty="No admin actions yet." isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">Action</th>
                    <th scope="col">Target</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((entry) => (
                    <tr key={entry.id}>
                      <td>{when(entry.createdAt)}</td>
                      <td>{actor(entry)}</td>
                      <td>{entry.action}</td>
                      <td>
                        {entry.targetType} {entry.targetId?.slice(0, 8)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {page.nextCursor && (
              <button
                type="button"
                onClick={() => {
                  const next = new URLSearchParams(params);
                  next.set("cursor", page.nextCursor!);
                  setParams(next);
                }}
              >
                Older entries
              </button>
            )}
          </>
        )}
      </Loaded>
    </Page>
  );
}
