// One lead's timeline: the events received (receipts), the messages (the first reply marked auto
// or business), and the side effects (replies, CRM deliveries) with their attempts.
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { api } from "../api/client";
import type { Receipt } from "../api/types";
import { useLink } from "../session";
import { Badge, Loaded, Page, seconds, when } from "../ui";
import { Attempts } from "./attempts";

const OPERATION_NAMES: Record<string, string> = {
  "lead-upsert": "Lead stored",
  "initial-response": "Automatic first reply",
  "crm-delivery": "CRM delivery",
  "provider-mark-replied": "Marked replied at the provider",
};
/** A receipt's jobs are created together: shown in the order they run (a lead, then its reply and delivery). */
const ORDER = Object.keys(OPERATION_NAMES);
const rank = (operation: string) => (ORDER.includes(operation) ? ORDER.indexOf(operation) : ORDER.length);

function ReceiptJobs({ receipt }: { receipt: Receipt }) {
  const link = useLink();
  const jobs = useQuery({
    queryKey: ["/admin/jobs", "receipt", receipt.id],
    queryFn: () => api.get("/admin/jobs", { query: { receiptId: receipt.id } }),
  });
  return (
    <Loaded query={jobs} empty="No side effects." isEmpty={(page) => page.items.length === 0}>
      {(page) => (
        <ul className="jobs">
          {[...page.items]
            .sort((a, b) => rank(a.operation) - rank(b.operation))
            .map((job) => (
              <li key={job.id} data-testid={`job-${job.operation}`}>
                <strong>{OPERATION_NAMES[job.operation] ?? job.operation}</strong>{" "}
                <Badge value={job.status} /> <Link to={link(`/jobs/${job.id}`)}>details</Link>
                <Attempts id={job.id} />
              </li>
            ))}
        </ul>
      )}
    </Loaded>
  );
}

export default function LeadDetail() {
  const { id = "" } = useParams();
  const lead = useQuery({
    queryKey: ["/admin/leads", id],
    queryFn: () => api.get("/admin/leads/{id}", { path: { id } }),
  });
  const receipts = useQuery({
    queryKey: ["/admin/receipts", "lead", lead.data?.externalLeadId],
    enabled: !!lead.data,
    queryFn: () =>
      api.get("/admin/receipts", {
        query: { leadId: lead.data!.externalLeadId, connectionId: lead.data!.connectionId },
      }),
  });
  return (
    <Page title="Lead timeline">
      <Loaded query={lead}>
        {(l) => (
          <>
            <h2>{l.name ?? l.externalLeadId}</h2>
            <dl className="facts">
              <dt>Contact</dt>
              <dd>{[l.email, l.phone].filter(Boolean).join(" · ") || "—"}</dd>
              <dt>Provider</dt>
              <dd>
                {l.provider} · {l.externalLeadId}
              </dd>
              <dt>First reply</dt>
              <dd data-testid="first-response">
                {l.firstResponse ? (
                  <>
                    <Badge value={l.firstResponse.by} /> after {seconds(l.firstResponse.seconds)} (
                    {when(l.firstResponse.at)})
                  </>
                ) : (
                  "none yet"
                )}
              </dd>
            </dl>
            <h3>Messages</h3>
            {(l.messages ?? []).length === 0 ? (
              <p className="empty">No messages.</p>
            ) : (
              <ol className="messages">
                {(l.messages ?? []).map((m) => (
                  <li key={m.externalId} className={m.direction}>
                    <span className="muted">
                      {when(m.sentAt)} · {m.author ?? m.direction}
                    </span>
                    <p>{m.text}</p>
                  </li>
                ))}
              </ol>
            )}
          </>
        )}
      </Loaded>
      <h3>Events and side effects</h3>
      <Loaded query={receipts} empty="No events received." isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <ol className="timeline">
            {[...page.items].reverse().map((receipt) => (
              <li key={receipt.id}>
                <p>
                  <strong>{receipt.kind}</strong> {when(receipt.occurredAt)} · via {receipt.source}{" "}
                  <Badge value={receipt.status} />
                </p>
                <ReceiptJobs receipt={receipt} />
              </li>
            ))}
          </ol>
        )}
      </Loaded>
    </Page>
  );
}
