// Leads: search by name, e-mail, phone or the provider's id (GET /admin/leads?q), newest first; only
// the client picked in the header's (?clientId), if one is.
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import { useClientQuery, useLink, useTenantQuery } from "../session";
import { Badge, Loaded, Page, when } from "../ui";
import { useConnectionNames } from "./names";

export default function Leads() {
  const [params, setParams] = useSearchParams();
  const tenant = useTenantQuery();
  const client = useClientQuery();
  const link = useLink();
  const names = useConnectionNames();
  const q = params.get("q") ?? "";
  const cursor = params.get("cursor") ?? undefined;
  const [search, setSearch] = useState(q);
  const leads = useQuery({
    queryKey: ["/admin/leads", tenant, client, q, cursor],
    queryFn: () => api.get("/admin/leads", { query: { ...tenant, ...client, q: q || undefined, cursor } }),
  });
  const set = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    setParams(next);
  };
  return (
    <Page title="Leads">
      <form
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          set({ q: search.trim() || undefined, cursor: undefined });
        }}
      >
        <label>
          Search leads
          <input
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder="name, e-mail, phone, id"
          />
        </label>
        <button type="submit">Search</button>
      </form>
      <Loaded
        query={leads}
        empty={q ? `No lead matches “${q}”.` : "No leads yet."}
        isEmpty={(page) => page.items.length === 0}
      >
        {(page) => (
          <>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Lead</th>
                    <th scope="col">Connection</th>
                    <th scope="col">Received</th>
                    <th scope="col">First reply</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((lead) => (
                    <tr key={lead.id}>
                      <td>
                        <Link to={link(`/leads/${lead.id}`)}>
                          {lead.name ?? lead.email ?? lead.externalLeadId}
                        </Link>
                      </td>
                      <td>{names(lead.connectionId)}</td>
                      <td>{when(lead.createdAt)}</td>
                      <td>{lead.firstResponse ? <Badge value={lead.firstResponse.by} /> : "none yet"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {page.nextCursor && (
              <button type="button" onClick={() => set({ cursor: page.nextCursor ?? undefined })}>
                Older leads
              </button>
            )}
          </>
        )}
      </Loaded>
    </Page>
  );
}
