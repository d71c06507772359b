// The first reply's settings of a connection (PATCH /admin/connections/{id} settings): its template,
// after-hours text and delay, and the business hours, with a live preview of the unsaved text (POST
// /admin/connections/{id}/reply-preview, writes nothing). Each of the two parts is the connection's
// own or inherited (effectiveSettings.source): a save sends only the parts that changed, so an
// inherited part stays inherited, and "Use the tenant's …" returns an own part to inheriting (null).
import { useEffect, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { AutoResponse, BusinessHours, Connection } from "../api/types";
import { ErrorBox } from "../ui";

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
type Part = "autoResponse" | "businessHours";
type Source = "connection" | "tenant" | "default";

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

/**
 * Always open, said by the connection itself: every day 00:00–24:00. (`null` in a PATCH means
 * "inherit the tenant's hours", which are not always open when the tenant has hours.)
 */
const ALWAYS_OPEN: BusinessHours = {
  timezone: "UTC",
  weekly: Object.fromEntries(DAYS.map((day) => [day, [["00:00", "24:00"]]])),
};
const alwaysOpen = (hours: BusinessHours | null | undefined) =>
  !hours || DAYS.every((day) => rangesText(hours.weekly[day]) === "00:00-24:00");

/** The form's fields, from a connection's effective settings. */
interface Fields {
  enabled: boolean;
  text: string;
  afterHours: string;
  delay: string;
  open: boolean;
  timezone: string;
  week: Record<string, string>;
}

function fieldsOf(connection: Connection): Fields {
  const reply = connection.effectiveSettings?.autoResponse ?? connection.settings.autoResponse;
  const hours = connection.effectiveSettings?.businessHours ?? connection.settings.businessHours ?? null;
  const open = alwaysOpen(hours);
  return {
    enabled: reply?.enabled ?? false,
    text: reply?.text ?? "",
    afterHours: reply?.afterHoursText ?? "",
    delay: reply?.delaySeconds ? String(reply.delaySeconds) : "",
    open,
    timezone: (!open && hours?.timezone) || "America/New_York",
    week: Object.fromEntries(DAYS.map((day) => [day, open ? "" : rangesText(hours?.weekly[day])])),
  };
}

/** What a PATCH would store for each part, from the form's fields. */
function partsOf(fields: Fields): { autoResponse: AutoResponse; businessHours: BusinessHours } {
  const delay = fields.delay.trim();
  return {
    autoResponse: {
      enabled: fields.enabled,
      text: fields.text,
      ...(fields.afterHours ? { afterHoursText: fields.afterHours } : {}),
      ...(delay ? { delaySeconds: Number(delay) } : {}),
    },
    businessHours: fields.open
      ? ALWAYS_OPEN
      : {
          timezone: fields.timezone,
          weekly: Object.fromEntries(DAYS.map((day) => [day, parseRanges(fields.week[day] ?? "")])),
        },
  };
}

const SOURCE_TEXT: Record<Source, Record<Part, string>> = {
  connection: {
    autoResponse: "This connection's own reply settings.",
    businessHours: "This connection's own hours.",
  },
  tenant: {
    autoResponse: "Inherited from the tenant's defaults: saving a change here gives this connection its own.",
    businessHours:
      "Inherited from the tenant's defaults: saving a change here gives this connection its own.",
  },
  default: {
    autoResponse: "Not set here or in the tenant's defaults: no automatic reply is sent.",
    businessHours: "Not set here or in the tenant's defaults: always open.",
  },
};

function useDebounced<T>(value: T, ms: number): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return current;
}

/** Where a part comes from, and a button returning an own part to inheriting. */
function SourceLine({
  part,
  source,
  canWrite,
  onInherit,
}: {
  part: Part;
  source: Source;
  canWrite: boolean;
  onInherit: (part: Part) => void;
}) {
  return (
    <p className="muted" data-testid={`source-${part}`}>
      {SOURCE_TEXT[source][part]}{" "}
      {canWrite && source === "connection" && (
        <button type="button" onClick={() => onInherit(part)}>
          {part === "autoResponse" ? "Use the tenant's reply settings" : "Use the tenant's hours"}
        </button>
      )}
    </p>
  );
}

export function ReplyTemplate({ connection, canWrite }: { connection: Connection; canWrite: boolean }) {
  const client = useQueryClient();
  const [fields, setFields] = useState(() => fieldsOf(connection));
  // What is stored now, as the form shows it: a part is sent only when it differs from this.
  const [stored, setStored] = useState(fields);
  const [message, setMessage] = useState<string | null>(null);
  const set = (change: Partial<Fields>) => {
    setFields({ ...fields, ...change });
    setMessage(null);
  };
  const sources = connection.effectiveSettings?.source ?? {
    autoResponse: "default",
    businessHours: "default",
  };
  const parts = partsOf(fields);
  const storedParts = partsOf(stored);
  const changed = (["autoResponse", "businessHours"] as const).filter(
    (part) => JSON.stringify(parts[part]) !== JSON.stringify(storedParts[part]),
  );
  const draft = useDebounced(parts.autoResponse, 400);
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
    mutationFn: (settings: Partial<Record<Part, AutoResponse | BusinessHours | null>>) =>
      api.patch("/admin/connections/{id}", { path: { id: connection.id }, body: { settings } }),
    onSuccess: (answer, settings) => {
      // A part returned to inheriting shows what it inherits now; the other fields stay as typed.
      const now = fieldsOf(answer.connection);
      const inherited = (part: Part) => part in settings && settings[part] === null;
      const merge = (base: Fields): Fields => ({
        ...base,
        ...(inherited("autoResponse")
          ? { enabled: now.enabled, text: now.text, afterHours: now.afterHours, delay: now.delay }
          : {}),
        ...(inherited("businessHours") ? { open: now.open, timezone: now.timezone, week: now.week } : {}),
      });
      setFields(merge(fields));
      setStored(merge(fields));
      setMessage(
        inherited("autoResponse") || inherited("businessHours")
          ? "Saved: inheriting the tenant's defaults."
          : "Saved.",
      );
      void client.invalidateQueries({ queryKey: ["/admin/connections"] });
    },
  });
  const submit = () => {
    if (changed.length === 0) {
      setMessage("Nothing to save: no field changed.");
      return;
    }
    save.mutate(Object.fromEntries(changed.map((part) => [part, parts[part]])));
  };
  const inherit = (part: Part) => save.mutate({ [part]: null });
  return (
    <form
      className="editor"
      aria-label="Reply template"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2>First reply</h2>
      <fieldset disabled={!canWrite}>
        <SourceLine
          part="autoResponse"
          source={sources.autoResponse}
          canWrite={canWrite}
          onInherit={inherit}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={fields.enabled}
            onChange={(e) => set({ enabled: e.target.checked })}
          />{" "}
          Send an automatic first reply
        </label>
        <label>
          Reply text (fields such as {"{{lead.firstName|there}}"})
          <textarea rows={4} value={fields.text} onChange={(e) => set({ text: e.target.value })} />
        </label>
        <label>
          Text outside business hours (optional)
          <textarea
            rows={3}
            value={fields.afterHours}
            onChange={(e) => set({ afterHours: e.target.value })}
          />
        </label>
        <label>
          Wait before sending, in seconds (0–900; empty: send at once). If someone at the business answers the
          lead meanwhile, no reply is sent.
          <input
            type="number"
            min={0}
            max={900}
            step={1}
            value={fields.delay}
            onChange={(e) => set({ delay: e.target.value })}
          />
        </label>
        <fieldset>
          <legend>Business hours</legend>
          <SourceLine
            part="businessHours"
            source={sources.businessHours}
            canWrite={canWrite}
            onInherit={inherit}
          />
          <label className="check">
            <input type="checkbox" checked={fields.open} onChange={(e) => set({ open: e.target.checked })} />{" "}
            Always open
          </label>
          {!fields.open && (
            <>
              <label>
                Time zone
                <input value={fields.timezone} onChange={(e) => set({ timezone: e.target.value })} />
              </label>
              <div className="week">
                {DAYS.map((day) => (
                  <label key={day}>
                    {day} (e.g. 08:00-18:00; empty: closed)
                    <input
                      value={fields.week[day] ?? ""}
                      onChange={(e) => set({ week: { ...fields.week, [day]: e.target.value } })}
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
        {message && !save.isPending && <p role="status">{message}</p>}
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
