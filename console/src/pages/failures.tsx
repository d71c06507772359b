// Failures: dead and blocked jobs grouped by error code and connection (GET /admin/jobs/summary);
// a group's jobs with their attempts and "Replay"; replaying a filtered set after its dry-run count
// (POST /admin/replays), with the replay's progress (GET /admin/replays/{id}).
import { useState } from "react";
import { Link } from "react-router";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { SummaryGroup } from "../api/types";
import { useCanWrite, useLink, useTenantQuery } from "../session";
import { Badge, count, ErrorBox, Loaded, Page, useSearchParam, when } from "../ui";
import { REPLAYABLE, ReplayButton } from "./job-detail";
import { useConnectionNames } from "./names";

type Status = "dead" | "blocked";

function GroupJobs({ group, status }: { group: SummaryGroup; status: Status }) {
  const tenant = useTenantQuery();
  const canWrite = useCanWrite();
  const link = useLink();
  const jobs = useQuery({
    queryKey: ["/admin/jobs", tenant, status, group.operation, group.connectionId, group.errorCode],
    refetchInterval: 2_000,
    queryFn: () =>
      api.get("/admin/jobs", {
        query: {
          ...tenant,
          status,
          operation: group.operation as "crm-delivery",
          connectionId: group.connectionId ?? undefined,
          errorCode: group.errorCode ?? undefined,
        },
      }),
  });
  return (
    <Loaded
      query={jobs}
      empty="None left."
      isEmpty={(page) => page.items.every((j) => j.lastErrorCode !== group.errorCode)}
    >
      {(page) => (
        <ul className="jobs">
          {page.items
            .filter((j) => j.lastErrorCode === group.errorCode)
            .map((j) => (
              <li key={j.id} data-testid="failed-job">
                <Link to={link(`/jobs/${j.id}`)}>{j.operation}</Link> <Badge value={j.status} />{" "}
                {count(j.attempts, "attempt")}, created {when(j.createdAt)}{" "}
                {canWrite && REPLAYABLE.has(j.status) && <ReplayButton id={j.id} />}
              </li>
            ))}
        </ul>
      )}
    </Loaded>
  );
}

/** The progress of a replay started here (GET /admin/replays/{id}), until every job is done. */
function ReplayProgress({ id, matched }: { id: string; matched: number }) {
  const client = useQueryClient();
  const progress = useQuery({
    queryKey: ["/admin/replays", id],
    queryFn: () => api.get("/admin/replays/{id}", { path: { id } }),
    refetchInterval: (query) => {
      const replay = query.state.data;
      if (replay && replay.succeeded + replay.failed + replay.skipped >= replay.matched) {
        void client.invalidateQueries({ queryKey: ["/admin/jobs/summary"] });
        return false;
      }
      return 1_000;
    },
  });
  const replay = progress.data;
  return (
    <p role="status" data-testid="replay-progress" className="secret">
      {replay
        ? `Replay ${replay.status}: ${replay.queued} queued, ${replay.succeeded} succeeded, ${replay.failed} failed, ${replay.skipped} skipped of ${replay.matched}`
        : `Replay of ${matched} jobs started…`}
    </p>
  );
}

function ReplaySet({
  status,
  group,
  onStarted,
}: {
  status: Status;
  group: SummaryGroup;
  onStarted: (replay: { id: string; matched: number }) => void;
}) {
  // Exactly the group's jobs: its error code, connection and operation, in the tenant shown.
  const tenant = useTenantQuery();
  const filter = {
    ...tenant,
    status,
    operation: group.operation,
    ...(group.connectionId ? { connectionId: group.connectionId } : {}),
    ...(group.errorCode ? { errorCode: group.errorCode } : {}),
  };
  const dryRun = useMutation({
    mutationFn: () => api.post("/admin/replays", { body: { filter, dryRun: true } }),
  });
  const start = useMutation({
    mutationFn: async () => {
      const answer = await api.post("/admin/replays", { body: { filter } });
      // Without dryRun the route answers 202 { id, matched } (a dry run's 200 has no id).
      if (!("id" in answer)) throw new Error("The replay did not start.");
      return answer;
    },
    onSuccess: onStarted,
  });
  return (
    <span className="confirm">
      {!dryRun.data ? (
        <button type="button" disabled={dryRun.isPending} onClick={() => dryRun.mutate()}>
          Replay all like these…
        </button>
      ) : (
        <>
          <span>{dryRun.data.matched} jobs match.</span>
          <button
            type="button"
            disabled={dryRun.data.matched === 0 || start.isPending || start.isSuccess}
            onClick={() => start.mutate()}
          >
            Replay {dryRun.data.matched} jobs
          </button>
          <button type="button" onClick={() => dryRun.reset()}>
            Cancel
          </button>
        </>
      )}
      {(dryRun.isError || start.isError) && <ErrorBox error={dryRun.error ?? start.error} />}
    </span>
  );
}

export default function Failures() {
  const [statusParam, setStatus] = useSearchParam("status");
  const tenant = useTenantQuery();
  const canWrite = useCanWrite();
  const names = useConnectionNames();
  const status = (statusParam === "blocked" ? "blocked" : "dead") as Status;
  const [open, setOpen] = useState<string | null>(null);
  const [replay, setReplay] = useState<{ id: string; matched: number } | null>(null);
  const summary = useQuery({
    queryKey: ["/admin/jobs/summary", tenant, status],
    queryFn: () => api.get("/admin/jobs/summary", { query: { ...tenant, status } }),
    refetchInterval: 5_000,
  });
  return (
    <Page title="Failures">
      <label>
        Show{" "}
        <select value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="dead">dead jobs (retries exhausted or permanent errors)</option>
          <option value="blocked">blocked jobs (waiting on a paused or broken connection)</option>
        </select>
      </label>
      {replay && <ReplayProgress id={replay.id} matched={replay.matched} />}
      <Loaded query={summary} empty={`No ${status} jobs.`} isEmpty={(s) => s.groups.length === 0}>
        {(s) => (
          <ul className="groups">
            {s.groups.map((group) => {
              const key = `${group.connectionId}|${group.operation}|${group.errorCode}`;
              return (
                <li key={key} data-testid="failure-group">
                  <h2>
                    <button
                      type="button"
                      aria-expanded={open === key}
                      onClick={() => setOpen(open === key ? null : key)}
                    >
                      {group.errorCode ?? "no error code"} · {group.operation} · {names(group.connectionId)}
                    </button>
                  </h2>
                  <p>
                    <strong>{count(group.count, "job")}</strong>, {when(group.oldest)} – {when(group.newest)}{" "}
                    {canWrite && <ReplaySet status={status} group={group} onStarted={setReplay} />}
                  </p>
                  {open === key && <GroupJobs group={group} status={status} />}
                </li>
              );
            })}
          </ul>
        )}
      </Loaded>
    </Page>
  );
}
