// One job: its status and attempt history, and "Replay" for a dead, blocked or cancelled one.
import { useParams } from "react-router";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import { useCanWrite } from "../session";
import { Badge, ErrorBox, Loaded, Page, when } from "../ui";
import { Attempts, useJob } from "./attempts";

export const REPLAYABLE = new Set(["dead", "blocked", "cancelled"]);

export function ReplayButton({ id }: { id: string }) {
  const client = useQueryClient();
  const replay = useMutation({
    mutationFn: () => api.post("/admin/jobs/{id}/replay", { path: { id }, body: {} }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["/admin/jobs"] }),
  });
  return (
    <>
      <button type="button" disabled={replay.isPending || replay.isSuccess} onClick={() => replay.mutate()}>
        {replay.isSuccess ? "Replay queued" : "Replay"}
      </button>
      {replay.isError && <ErrorBox error={replay.error} />}
    </>
  );
}

export default function JobDetail() {
  const { id = "" } = useParams();
  const canWrite = useCanWrite();
  const job = useJob(id, 2_000);
  return (
    <Page title="Job">
      <Loaded query={job}>
        {(j) => (
          <>
            <dl className="facts">
              <dt>Operation</dt>
              <dd>{j.operation}</dd>
              <dt>Status</dt>
              <dd data-testid="job-status">
                <Badge value={j.status} /> {j.lastErrorCode}
              </dd>
              <dt>Created</dt>
              <dd>{when(j.createdAt)}</dd>
            </dl>
            {canWrite && REPLAYABLE.has(j.status) && <ReplayButton id={j.id} />}
            <h2>Attempts</h2>
            <Attempts id={j.id} />
          </>
        )}
      </Loaded>
    </Page>
  );
}
