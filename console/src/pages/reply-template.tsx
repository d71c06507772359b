// The first reply's settings of a connection (PATCH /admin/connections/{id} settings): its template,
// after-hours text and delay, and the business hours, with a live preview of the unsaved text (POST
// /admin/connections/{id}/reply-preview, writes nothing). Each of the two parts is the connection's
// own or inherited from its client's or its tenant's defaults (effectiveSettings.source): a save sends
// only the parts that changed, so an inherited part stays inherited, and "Inherit …" returns an own
// part to inheriting (null). The response target, set in the defaults, is shown with its source.
import { useEffect, useRef, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { AutoResponse, BusinessHours, Connection } from "../api/types";
import { ConfirmButton, ErrorBox, seconds as duration } from "../ui";

export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
const PARTS = ["autoResponse", "businessHours"] as const;
type Part = (typeof PARTS)[number];
type Source = NonNullable<Connection["effectiveSettings"]>["source"]["autoResponse"];

/** "08:00-12:00, 13:00-18:00" ⇔ [["08:00","12:00"],["13:00","18:00"]]; "" is closed. */
export const rangesText = (ranges: string[][] = []) => ranges.map(([a, b]) => `${a}-${b}`).join(", ");
export const parseRanges = (text: string): [string, string][] =>
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
export const ALWAYS_OPEN: BusinessHours = {
  timezone: "UTC",
  weekly: Object.fromEntries(DAYS.map((day) => [day, [["00:00", "24:00"]]])),
};
export const alwaysOpen = (hours: BusinessHours | null | undefined) =>
  !hours || DAYS.every((day) => rangesText(hours.weekly[day]) === "00:00-24:00");

/** The form's fields of each part. */
interface Fields {
  autoResponse: { enabled: boolean; text: string; afterHours: string; delay: string };
  businessHours: { open: boolean; timezone: string; week: Record<string, string> };
}

/** The fields of a connection's effective settings. */
function fieldsOf(connection: Connection): Fields {
  const reply = connection.effectiveSettings?.autoResponse ?? connection.settings.autoResponse;
  const hours = connection.effectiveSettings?.businessHours ?? connection.settings.businessHours ?? null;
  const open = alwaysOpen(hours);
  return {
    autoResponse: {
      enabled: reply?.enabled ?? false,
      text: reply?.text ?? "",
      afterHours: reply?.afterHoursText ?? "",
      delay: reply?.delaySeconds ? String(reply.delaySeconds) : "",
    },
    businessHours: {
      open,
      timezone: (!open && hours?.timezone) || "America/New_York",
      week: Object.fromEntries(DAYS.map((day) => [day, open ? "" : rangesText(hours?.weekly[day])])),
    },
  };
}

/** What a PATCH would store for each part (a delay of 0 is the default: left out, as the API shows it). */
function partsOf(fields: Fields): { autoResponse: AutoResponse; businessHours: BusinessHours } {
  const { enabled, text, afterHours, delay } = fields.autoResponse;
  const { open, timezone, week } = fields.businessHours;
  const seconds = delay.trim() === "" ? 0 : Number(delay);
  return {
    autoResponse: {
      enabled,
      text,
      ...(afterHours ? { afterHoursText: afterHours } : {}),
      ...(seconds !== 0 ? { delaySeconds: seconds } : {}),
    },
    businessHours: open
      ? ALWAYS_OPEN
      : { timezone, weekly: Object.fromEntries(DAYS.map((day) => [day, parseRanges(week[day] ?? "")])) },
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** `base` with each of `parts` taken from `from`. */
const withParts = (base: Fields, parts: readonly Part[], from: (part: Part) => Fields[Part]): Fields => ({
  ...base,
  ...Object.fromEntries(parts.map((part) => [part, from(part)])),
});

/** What the form refuses to send, with the reason (the API checks the rest, and says why). */
function refusal(fields: Fields, delayUnreadable: boolean): string | undefined {
  if (delayUnreadable) return "The wait before sending must be a whole number of seconds from 0 to 900.";
  const { open, week } = fields.businessHours;
  if (!open && DAYS.every((day) => (week[day] ?? "").trim() === ""))
    return "Enter the hours of at least one day (a week with none is closed all the time), or check Always open.";
  return undefined;
}

const SOURCE_TEXT: Record<Source, Record<Part, string>> = {
  connection: {
    autoResponse: "This connection's own reply settings.",
    businessHours: "This connection's own hours.",
  },
  client: {
    autoResponse: "Inherited from the client's defaults: saving a change here gives this connection its own.",
    businessHours:
      "Inherited from the client's defaults: saving a change here gives this connection its own.",
  },
  tenant: {
    autoResponse: "Inherited from the tenant's defaults: saving a change here gives this connection its own.",
    businessHours:
      "Inherited from the tenant's defaults: saving a change here gives this connection its own.",
  },
  default: {
    autoResponse: "Not set here or in the client's or tenant's defaults: no automatic reply is sent.",
    businessHours: "Not set here or in the client's or tenant's defaults: always open.",
  },
};

/** Where the response target (set in the client's or tenant's defaults, or the connection's settings) comes from. */
const TARGET_SOURCE: Record<Source, string> = {
  connection: "source: connection (its own)",
  client: "source: client (the client's defaults)",
  tenant: "source: tenant (the tenant's defaults)",
  default: "source: default (Leadgate's 5 minutes)",
};

const INHERIT: Record<Part, { label: string; question: string }> = {
  autoResponse: {
    label: "Inherit the reply settings",
    question:
      "Delete this connection's own reply settings? It then replies as its client's (else the tenant's) defaults say, and sends no automatic reply if they set none.",
  },
  businessHours: {
    label: "Inherit the hours",
    question:
      "Delete this connection's own hours? It then keeps its client's (else the tenant's) hours, or is always open if neither sets any.",
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

/** Where a part comes from, and (confirmed first) returning an own part to inheriting. */
function SourceLine(props: {
  part: Part;
  source: Source;
  canWrite: boolean;
  busy: boolean;
  onInherit: (part: Part) => void;
}) {
  const { part, source, canWrite, busy, onInherit } = props;
  return (
    <div className="muted" data-testid={`source-${part}`}>
      {SOURCE_TEXT[source][part]}{" "}
      {canWrite && source === "connection" && (
        <ConfirmButton
          label={INHERIT[part].label}
          question={INHERIT[part].question}
          disabled={busy}
          onConfirm={() => onInherit(part)}
        />
      )}
    </div>
  );
}

type Sent = Partial<Record<Part, AutoResponse | BusinessHours | null>>;

export function ReplyTemplate({ connection, canWrite }: { connection: Connection; canWrite: boolean }) {
  const client = useQueryClient();
  const [fields, setFields] = useState(() => fieldsOf(connection));
  // What is stored, as the form shows it: a part is sent only when it differs from this.
  const [stored, setStored] = useState(fields);
  // The delay's field, asked at save whether it holds what it cannot read ("1e", "--1"): such a field
  // answers "" for its value, which must not be sent as no delay.
  const delayField = useRef<HTMLInputElement>(null);
  // The outcome of the last save, or why the form refused to send it.
  const [message, setMessage] = useState<{ text: string; refused?: boolean } | null>(null);
  const edit = <P extends Part>(part: P, change: Partial<Fields[P]>) => {
    setFields((now) => ({ ...now, [part]: { ...now[part], ...change } }));
    setMessage(null);
  };

  // Stored settings changed elsewhere (another user, the tenant's defaults): a part not being edited
  // here shows them.
  const latest = fieldsOf(connection);
  const latestKey = JSON.stringify(latest);
  useEffect(() => {
    const unedited = PARTS.filter(
      (part) => same(fields[part], stored[part]) && !same(stored[part], latest[part]),
    );
    if (unedited.length === 0) return;
    const update = (base: Fields) => withParts(base, unedited, (part) => latest[part]);
    setFields(update);
    setStored(update);
    // Runs when the connection as stored changes, not on every edit.
  }, [latestKey]);

  const sources = connection.effectiveSettings?.source ?? {
    autoResponse: "default",
    businessHours: "default",
  };
  const parts = partsOf(fields);
  const storedParts = partsOf(stored);
  const changed = PARTS.filter((part) => !same(parts[part], storedParts[part]));
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
    // `shown`: the fields as they were when sent (typing goes on while the request is out).
    mutationFn: ({ settings }: { settings: Sent; shown: Fields }) =>
      api.patch("/admin/connections/{id}", { path: { id: connection.id }, body: { settings } }),
    onMutate: () => setMessage(null),
    onSuccess: (answer, { settings, shown }) => {
      const now = fieldsOf(answer.connection);
      const sent = PARTS.filter((part) => part in settings);
      const inherited = sent.filter((part) => settings[part] === null);
      // A sent part is stored as it was sent; one returned to inheriting shows what it inherits now.
      const of = (part: Part) => (inherited.includes(part) ? now[part] : shown[part]);
      setStored((before) => withParts(before, sent, of));
      setFields((before) => withParts(before, inherited, (part) => now[part]));
      setMessage({ text: inherited.length > 0 ? "Saved: inheriting the defaults." : "Saved." });
      void client.invalidateQueries({ queryKey: ["/admin/connections"] });
    },
  });
  const submit = () => {
    const refused = refusal(fields, delayField.current?.validity.badInput ?? false);
    if (refused) return setMessage({ text: refused, refused: true });
    if (changed.length === 0) return setMessage({ text: "Nothing to save: no field changed." });
    save.mutate({ settings: Object.fromEntries(changed.map((part) => [part, parts[part]])), shown: fields });
  };
  const inherit = (part: Part) => save.mutate({ settings: { [part]: null }, shown: fields });
  const sourceLine = (part: Part) => (
    <SourceLine
      part={part}
      source={sources[part]}
      canWrite={canWrite}
      busy={save.isPending}
      onInherit={inherit}
    />
  );
  const { enabled, text, afterHours, delay } = fields.autoResponse;
  const { open, timezone, week } = fields.businessHours;
  return (
    <form
      className="editor"
      aria-label="Reply template"
      // The form's own checks say what is wrong in words (the browser's would block the save silently).
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2>First reply</h2>
      <p data-testid="source-responseTarget">
        Response target: {duration(connection.effectiveSettings?.responseTarget.seconds)} ·{" "}
        {TARGET_SOURCE[sources.responseTarget ?? "default"]}
      </p>
      <fieldset disabled={!canWrite}>
        {sourceLine("autoResponse")}
        <label className="check">
          <input
            type="checkbox"
            checked={enabled}
            onChange={(e) => edit("autoResponse", { enabled: e.target.checked })}
          />{" "}
          Send an automatic first reply
        </label>
        <label>
          Reply text (fields such as {"{{lead.firstName|there}}"})
          <textarea rows={4} value={text} onChange={(e) => edit("autoResponse", { text: e.target.value })} />
        </label>
        <label>
          Text outside business hours (optional)
          <textarea
            rows={3}
            value={afterHours}
            onChange={(e) => edit("autoResponse", { afterHours: e.target.value })}
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
            value={delay}
            ref={delayField}
            onChange={(e) => edit("autoResponse", { delay: e.target.value })}
          />
        </label>
        <fieldset>
          <legend>Business hours</legend>
          {sourceLine("businessHours")}
          <label className="check">
            <input
              type="checkbox"
              checked={open}
              onChange={(e) => edit("businessHours", { open: e.target.checked })}
            />{" "}
            Always open
          </label>
          {!open && (
            <>
              <label>
                Time zone
                <input
                  value={timezone}
                  onChange={(e) => edit("businessHours", { timezone: e.target.value })}
                />
              </label>
              <div className="week">
                {DAYS.map((day) => (
                  <label key={day}>
                    {day} (e.g. 08:00-18:00; empty: closed)
                    <input
                      value={week[day] ?? ""}
                      onChange={(e) => edit("businessHours", { week: { ...week, [day]: e.target.value } })}
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
        {message && (
          <p role={message.refused ? "alert" : "status"} className={message.refused ? "error" : undefined}>
            {message.text}
          </p>
        )}
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
