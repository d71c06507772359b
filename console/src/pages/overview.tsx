// Overview: the last 24 h (GET /admin/overview), speed to lead per connection with a chart of the
// last 30 days (GET /admin/speed-to-lead?bucket=day, only the client picked in the header's when one
// is: ?clientId; the chart library loads on its own), open alerts.
import { lazy, Suspense } from "react";
import { Link } from "react-router";
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import { useClientNames, useConnectionNames } from "./names";
import { useClientQuery, useLink, useTenantQuery } from "../session";
import { Loaded, Page, percent, seconds, when } from "../ui";

const SpeedChart = lazy(() => import("./speed-chart"));

export default function Overview() {
  const tenant = useTenantQuery();
  const link = useLink();
  const names = useConnectionNames();
  const client = useClientQuery();
  const clientName = useClientNames();
  const figures = useQuery({
    queryKey: ["/admin/overview", tenant],
    queryFn: () => api.get("/admin/overview", { query: tenant }),
  });
  const speed = useQuery({
    queryKey: ["/admin/speed-to-lead", tenant, client],
    queryFn: () => api.get("/admin/speed-to-lead", { query: { ...tenant, ...client, bucket: "day" } }),
  });
  const alerts = useQuery({
    queryKey: ["/admin/alerts", "open", tenant],
    queryFn: () => api.get("/admin/alerts", { query: { ...tenant, status: "open", limit: 5 } }),
  });
  return (
    <Page title="Overview">
      <Loaded query={figures}>
        {(f) => (
          <dl className="figures" aria-label="The last 24 hours">
            <div>
              <dt>Leads (24 h)</dt>
              <dd data-testid="leads24h">{f.leads24h}</dd>
            </div>
            <div>
              <dt>Events received (24 h)</dt>
              <dd>{f.receipts24h}</dd>
            </div>
            <div>
              <dt>
                <Link to={link("/failures")}>Failures (24 h)</Link>
              </dt>
              <dd data-testid="failed24h">{f.failed24h}</dd>
            </div>
            <div>
              <dt>
                <Link to={link("/alerts")}>Open alerts</Link>
              </dt>
              <dd>{f.openAlerts}</dd>
            </div>
            <div>
              <dt>
                <Link to={link("/connections")}>Connections needing attention</Link>
              </dt>
              <dd>
                {f.connections.attention} of {f.connections.total}
              </dd>
            </div>
          </dl>
        )}
      </Loaded>
      <h2>Speed to lead, last 30 days{client.clientId ? ` (${clientName(client.clientId)})` : ""}</h2>
      <Loaded query={speed} empty="No leads in the last 30 days." isEmpty={(r) => r.overall.leads === 0}>
        {(report) => (
          <>
            <Suspense fallback={<p aria-busy="true">Loading the chart…</p>}>
              {report.series && <SpeedChart series={report.series} />}
            </Suspense>
            <div className="table-wrap">
              <table>
                <caption>Per connection</caption>
                <thead>
                  <tr>
                    <th scope="col">Connection</th>
                    <th scope="col">Leads</th>
                    <th scope="col">Median</th>
                    <th scope="col">p90</th>
                    <th scope="col">Within target</th>
                    <th scope="col">Unanswered</th>
                  </tr>
                </thead>
                <tbody>
                  {report.items.map((item) => (
                    <tr key={item.connectionId}>
                      <td>
                        <Link to={link(`/connections/${item.connectionId}`)}>{names(item.connectionId)}</Link>
                      </td>
                      <td>{item.leads}</td>
                      <td>{seconds(item.medianSeconds)}</td>
                      <td>{seconds(item.p90Seconds)}</td>
                      <td>{percent(item.withinTargetShare)}</td>
                      <td>{item.unanswered}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Loaded>
      <h2>Open alerts</h2>
      <Loaded query={alerts} empty="No open alerts." isEmpty={(page) => page.items.length === 0}>
        {(page) => (
          <ul>
            {page.items.map((alert) => (
              <li key={alert.id}>
                <Link to={link("/alerts")}>{alert.summary}</Link> — since {when(alert.firstSeenAt)}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </Page>
  );
}
