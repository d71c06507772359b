// Shared pieces of the screens: the loading / empty / error states, confirmations, copy buttons.
import { useState, type ReactNode } from "react";
import type { UseQueryResult } from "@tanstack/react-query";
import { useSearchParams } from "react-router";
import { ApiError } from "./api/client";

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}

/** A detail's value as a sentence: a list of reasons joined, any other value as JSON. */
const detailText = (value: unknown): string =>
  Array.isArray(value)
    ? value.map(detailText).join("; ")
    : typeof value === "string"
      ? value
      : JSON.stringify(value);

/** An error's sentence, and what its `details` (api.md) say of each field: why, and where. */
export function ErrorBox({ error }: { error: unknown }) {
  const raw = error instanceof ApiError ? error.details : undefined;
  const details = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? Object.entries(raw) : [];
  return (
    <div role="alert" className="error">
      <p>{errorText(error)}</p>
      {details.length > 0 && (
        <ul>
          {details.map(([field, reasons]) => (
            <li key={field}>
              <code>{field}</code>: {detailText(reasons)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** What a refused request's `details` say of `field` and the fields under it ("branding.logoUrl"). */
export function FieldError({ error, field }: { error: unknown; field: string }) {
  const raw = error instanceof ApiError ? error.details : undefined;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
  const reasons = Object.entries(raw)
    .filter(([name]) => name === field || name.startsWith(`${field}.`))
    .map(([, value]) => detailText(value));
  if (reasons.length === 0) return null;
  return (
    <span className="field-error" data-testid={`error-${field}`}>
      {reasons.join("; ")}
    </span>
  );
}

/** Renders a query's data, or its loading, error or empty state. */
export function Loaded<T>({
  query,
  empty,
  isEmpty,
  children,
}: {
  query: UseQueryResult<T>;
  empty?: string;
  isEmpty?: (data: T) => boolean;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <p aria-busy="true">Loading…</p>;
  if (query.isError) return <ErrorBox error={query.error} />;
  const data = query.data;
  if (empty && isEmpty?.(data)) return <p className="empty">{empty}</p>;
  return <>{children(data)}</>;
}

export function Page({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section>
      <h1>{title}</h1>
      {children}
    </section>
  );
}

/** A destructive action behind a second, explicit click. */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  disabled,
}: {
  label: string;
  question: string;
  onConfirm: () => void;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span role="group" aria-label={question} className="confirm">
      <span>{question}</span>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setCopied(true));
      }}
    >
      {copied ? "Copied" : label}
    </button>
  );
}

/** A secret shown once, with its copy button. */
export function ShownOnce({ name, value }: { name: string; value: string }) {
  return (
    <div className="secret" role="status">
      <span>
        {name} (shown once): <code data-testid="secret">{value}</code>
      </span>{" "}
      <CopyButton text={value} />
    </div>
  );
}

export const when = (value: string | null | undefined) => (value ? new Date(value).toLocaleString() : "—");
/** A duration as people say it: 42 s, 3.3 min, 5.2 h, 12 days. */
export const seconds = (value: number | null | undefined) =>
  value === null || value === undefined
    ? "—"
    : value < 120
      ? `${Math.round(value)} s`
      : value < 7200
        ? `${(value / 60).toFixed(1)} min`
        : value < 172_800
          ? `${(value / 3600).toFixed(1)} h`
          : `${Math.round(value / 86_400)} days`;
/** "1 job", "3 jobs". */
export const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
export const percent = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : `${Math.round(value * 100)} %`;

export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value.replace(/[^a-z_]/gi, "")}`}>{value}</span>;
}

/** A page filter kept in one search parameter of the URL, so the filtered page is a deep link. */
export function useSearchParam(name: string): [string | null, (value: string) => void] {
  const [params, setParams] = useSearchParams();
  const set = (value: string) => {
    const next = new URLSearchParams(params);
    next.set(name, value);
    setParams(next);
  };
  return [params.get(name), set];
}
