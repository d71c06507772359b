// Audit: who did what admin action when (GET /admin/audit), newest first, page by page.
import { useSearchParams } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import type { AuditEntry } from "../api/types";
import { useTenantQuery } from "../session";
import { Loaded, Page, when } from "../ui";
import { useUserNames } from "./names";

/** The user (by e-mail) or API key behind an entry. */
const actor = (entry: AuditEntry, userName: (id: string) => string) =>
  entry.userId ? userName(entry.userId) : entry.apiKeyId ? `API key ${entry.apiKeyId.slice(0, 8)}` : "—";

export default function Audit() {
  const [params, setParams] = useSearchParams();
  const tenant = useTenantQuery();
  const userName = useUserNames();
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
                      <td>{actor(entry, userName)}</td>
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
