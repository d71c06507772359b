// A client's defaults (PATCH /admin/clients/{id} defaults): the response target, the first reply and
// the business hours its connections inherit before the tenant's. Each part is set here or left to
// the tenant (sent as null); a save sends only the parts that changed, and the API's reasons (a delay
// at or above a connection's target, say) are shown beside the part they name.
import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "../api/client";
import type { Client, ReplySettings } from "../api/types";
import { ErrorBox, FieldError } from "../ui";
import { ALWAYS_OPEN, alwaysOpen, DAYS, parseRanges, rangesText } from "./reply-template";

interface Fields {
  target: string;
  reply: { set: boolean; enabled: boolean; text: string; afterHours: string; delay: string };
  hours: { set: boolean; open: boolean; timezone: string; week: Record<string, string> };
}

function fieldsOf(defaults: ReplySettings): Fields {
  const reply = defaults.autoResponse;
  const hours = defaults.businessHours as ReplySettings["businessHours"] & {
    timezone?: string;
    weekly?: Record<string, string[][]>;
  };
  const open = alwaysOpen(hours?.weekly ? { timezone: hours.timezone ?? "UTC", weekly: hours.weekly } : null);
  return {
    target: defaults.responseTarget ? String(defaults.responseTarget.seconds) : "",
    reply: {
      set: !!reply,
      enabled: reply?.enabled ?? false,
      text: reply?.text ?? "",
      afterHours: reply?.afterHoursText ?? "",
      delay: reply?.delaySeconds ? String(reply.delaySeconds) : "",
    },
    hours: {
      set: !!hours,
      open,
      timezone: (!open && hours?.timezone) || "America/New_York",
      week: Object.fromEntries(DAYS.map((day) => [day, open ? "" : rangesText(hours?.weekly?.[day])])),
    },
  };
}

const PARTS = ["responseTarget", "autoResponse", "businessHours"] as const;

/** What the defaults would store for each part; null: left to the tenant's. */
function partsOf(fields: Fields): Record<(typeof PARTS)[number], unknown> {
  const { reply, hours } = fields;
  const delay = reply.delay.trim() === "" ? 0 : Number(reply.delay);
  return {
    responseTarget: fields.target.trim() === "" ? null : { seconds: Number(fields.target) },
    autoResponse: reply.set
      ? {
          enabled: reply.enabled,
          text: reply.text,
          ...(reply.afterHours ? { afterHoursText: reply.afterHours } : {}),
          ...(delay !== 0 ? { delaySeconds: delay } : {}),
        }
      : null,
    businessHours: !hours.set
      ? null
      : hours.open
        ? ALWAYS_OPEN
        : {
            timezone: hours.timezone,
            weekly: Object.fromEntries(DAYS.map((day) => [day, parseRanges(hours.week[day] ?? "")])),
          },
  };
}

export function ClientDefaults({ client, canWrite }: { client: Client; canWrite: boolean }) {
  const queries = useQueryClient();
  const [fields, setFields] = useState(() => fieldsOf(client.defaults));
  const stored = partsOf(fieldsOf(client.defaults));
  const parts = partsOf(fields);
  const changed = PARTS.filter((part) => JSON.stringify(parts[part]) !== JSON.stringify(stored[part]));
  const [nothing, setNothing] = useState(false);
  const save = useMutation({
    mutationFn: () =>
      api.patch("/admin/clients/{id}", {
        path: { id: client.id },
        body: { defaults: Object.fromEntries(changed.map((part) => [part, parts[part]])) as ReplySettings },
      }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ["/admin/clients"] });
      void queries.invalidateQueries({ queryKey: ["/admin/connections"] });
    },
  });
  const edit = <K extends "reply" | "hours">(key: K, change: Partial<Fields[K]>) => {
    setFields((now) => ({ ...now, [key]: { ...now[key], ...change } }));
    setNothing(false);
  };
  const { reply, hours } = fields;
  return (
    <form
      className="editor"
      aria-label="Client defaults"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (changed.length === 0) return setNothing(true);
        save.mutate();
      }}
    >
      <h2>Defaults for its connections</h2>
      <p className="muted">
        What its connections inherit unless they set their own; a part not set here comes from the
        tenant&apos;s defaults.
      </p>
      <fieldset disabled={!canWrite}>
        <label>
          Response target, in seconds (1–86400; empty: the tenant&apos;s)
          <input
            type="number"
            min={1}
            max={86400}
            value={fields.target}
            onChange={(e) => {
              setFields({ ...fields, target: e.target.value });
              setNothing(false);
            }}
          />
          <FieldError error={save.error} field="defaults.responseTarget" />
        </label>
        <fieldset>
          <legend>First reply</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={reply.set}
              onChange={(e) => edit("reply", { set: e.target.checked })}
            />{" "}
            Set the first reply for this client (else the tenant&apos;s)
          </label>
          {reply.set && (
            <>
              <label className="check">
                <input
                  type="checkbox"
                  checked={reply.enabled}
                  onChange={(e) => edit("reply", { enabled: e.target.checked })}
                />{" "}
                Send an automatic first reply
              </label>
              <label>
                Default reply text
                <textarea
                  rows={3}
                  value={reply.text}
                  onChange={(e) => edit("reply", { text: e.target.value })}
                />
              </label>
              <label>
                Default text outside business hours (optional)
                <textarea
                  rows={2}
                  value={reply.afterHours}
                  onChange={(e) => edit("reply", { afterHours: e.target.value })}
                />
              </label>
              <label>
                Default wait before sending, in seconds (0–900)
                <input
                  type="number"
                  min={0}
                  max={900}
                  value={reply.delay}
                  onChange={(e) => edit("reply", { delay: e.target.value })}
                />
              </label>
            </>
          )}
          <FieldError error={save.error} field="defaults.autoResponse" />
        </fieldset>
        <fieldset>
          <legend>Business hours</legend>
          <label className="check">
            <input
              type="checkbox"
              checked={hours.set}
              onChange={(e) => edit("hours", { set: e.target.checked })}
            />{" "}
            Set business hours for this client (else the tenant&apos;s)
          </label>
          {hours.set && (
            <>
              <label className="check">
                <input
                  type="checkbox"
                  checked={hours.open}
                  onChange={(e) => edit("hours", { open: e.target.checked })}
                />{" "}
                Always open
              </label>
              {!hours.open && (
                <>
                  <label>
                    Hours&apos; time zone
                    <input
                      value={hours.timezone}
                      onChange={(e) => edit("hours", { timezone: e.target.value })}
                    />
                  </label>
                  <div className="week">
                    {DAYS.map((day) => (
                      <label key={day}>
                        {day} (e.g. 08:00-18:00; empty: closed)
                        <input
                          value={hours.week[day] ?? ""}
                          onChange={(e) => edit("hours", { week: { ...hours.week, [day]: e.target.value } })}
                        />
                      </label>
                    ))}
                  </div>
                </>
              )}
            </>
          )}
          <FieldError error={save.error} field="defaults.businessHours" />
        </fieldset>
        {canWrite && (
          <button type="submit" disabled={save.isPending}>
            Save defaults
          </button>
        )}
        {nothing && <p role="status">Nothing to save: no field changed.</p>}
        {save.isSuccess && changed.length === 0 && <p role="status">Defaults saved.</p>}
        {save.isError && <ErrorBox error={save.error} />}
      </fieldset>
    </form>
  );
}
