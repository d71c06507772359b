// The first reply's template and business hours (PATCH /admin/connections/{id} settings), with a
// live preview of the unsaved text (POST /admin/connections/{id}/reply-preview, writes nothing).
import { useEffect, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { AutoResponse, BusinessHours, Connection } from "../api/types";
import { ErrorBox } from "../ui";

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

/** "08:00-12:00, 13:00-18:00" ⇔ [["08:00","12:00"],["13:00","18:00"]]; "" is closed. */
const rangesText = (ranges: string[][] = []) => ranges.map(([a, b]) => `${a}-${b}`).join(", ");
const parseRanges = (text: string): [string, string][] =>
  text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [from = "", to = ""] = part.split("-").map((s) => s.trim());
      return [from, to];
    });

function useDebounced<T>(value: T, ms: number): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return current;
}

export function ReplyTemplate({ connection, canWrite }: { connection: Connection; canWrite: boolean }) {
  const client = useQueryClient();
  const saved = connection.settings.autoResponse ?? connection.effectiveSettings?.autoResponse ?? undefined;
  const hours = connection.settings.businessHours ?? connection.effectiveSettings?.businessHours ?? null;
  const [enabled, setEnabled] = useState(saved?.enabled ?? false);
  const [text, setText] = useState(saved?.text ?? "");
  const [afterHours, setAfterHours] = useState(saved?.afterHoursText ?? "");
  const [alwaysOpen, setAlwaysOpen] = useState(hours === null);
  const [timezone, setTimezone] = useState(hours?.timezone ?? "America/New_York");
  const [week, setWeek] = useState<Record<string, string>>(
    Object.fromEntries(DAYS.map((day) => [day, rangesText(hours?.weekly[day])])),
  );
  const autoResponse: AutoResponse = {
    enabled,
    text,
    ...(afterHours ? { afterHoursText: afterHours } : {}),
  };
  const businessHours: BusinessHours | null = alwaysOpen
    ? null
    : { timezone, weekly: Object.fromEntries(DAYS.map((day) => [day, parseRanges(week[day] ?? "")])) };
  const draft = useDebounced(autoResponse, 400);
  const preview = useQuery({
    queryKey: ["reply-preview", connection.id, draft],
    enabled: canWrite && draft.text.length > 0,
    retry: false,
    queryFn: () =>
      api.post("/admin/connections/{id}/reply-preview", {
        path: { id: connection.id },
        body: { autoResponse: draft },
      }),
  });
  const save = useMutation({
    mutationFn: () =>
      api.patch("/admin/connections/{id}", {
        path: { id: connection.id },
        body: { settings: { autoResponse, businessHours } },
      }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["/admin/connections"] }),
  });
  return (
    <form
      className="editor"
      aria-label="Reply template"
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <h2>First reply</h2>
      <fieldset disabled={!canWrite}>
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Send an
          automatic first reply
        </label>
        <label>
          Reply text (fields such as {"{{lead.firstName|there}}"})
          <textarea rows={4} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <label>
          Text outside business hours (optional)
          <textarea rows={3} value={afterHours} onChange={(e) => setAfterHours(e.target.value)} />
        </label>
        <fieldset>
          <legend>Business hours</legend>
          <label className="check">
            <input type="checkbox" checked={alwaysOpen} onChange={(e) => setAlwaysOpen(e.target.checked)} />{" "}
            Always open
          </label>
          {!alwaysOpen && (
            <>
              <label>
                Time zone
                <input value={timezone} onChange={(e) => setTimezone(e.target.value)} />
              </label>
              <div className="week">
                {DAYS.map((day) => (
                  <label key={day}>
                    {day} (e.g. 08:00-18:00; empty: closed)
                    <input
                      value={week[day] ?? ""}
                      onChange={(e) => setWeek({ ...week, [day]: e.target.value })}
                    />
                  </label>
                ))}
              </div>
            </>
          )}
        </fieldset>
        {canWrite && (
          <button type="submit" disabled={save.isPending}>
            Save reply settings
          </button>
        )}
        {save.isSuccess && <p role="status">Saved.</p>}
        {save.isError && <ErrorBox error={save.error} />}
      </fieldset>
      <section aria-label="Preview" aria-live="polite" className="preview">
        <h3>Preview</h3>
        {preview.isFetching && <p aria-busy="true">Rendering…</p>}
        {preview.isError && <ErrorBox error={preview.error} />}
        {preview.data && (
          <>
            <p data-testid="preview-text">{preview.data.text}</p>
            <p className="muted">
              {preview.data.variant} · would be sent {new Date(preview.data.sendAt).toLocaleString()}
            </p>
          </>
        )}
      </section>
    </form>
  );
}
