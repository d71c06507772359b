// A job's attempt history (GET /admin/jobs/{id}): time, outcome, error code, duration.
import { useQuery } from "@tanstack/react-query";
import { api } from "../api/client";
import { Loaded, when } from "../ui";

export function useJob(id: string, refetchInterval?: number) {
  return useQuery({
    queryKey: ["/admin/jobs", id],
    queryFn: () => api.get("/admin/jobs/{id}", { path: { id } }),
    refetchInterval,
  });
}

export function Attempts({ id }: { id: string }) {
  const job = useJob(id);
  return (
    <Loaded query={job} empty="No attempt yet." isEmpty={(j) => (j.attemptHistory ?? []).length === 0}>
      {(j) => (
        <ol className="attempts" aria-label={`Attempts of ${j.operation}`}>
          {(j.attemptHistory ?? []).map((a) => (
            <li key={a.number}>
              #{a.number} {when(a.startedAt)} — {a.outcome ?? "running"}
              {a.errorCode ? ` (${a.errorCode})` : ""}
              {a.durationMs !== null ? `, ${a.durationMs} ms` : ""}
            </li>
          ))}
        </ol>
      )}
    </Loaded>
  );
}
