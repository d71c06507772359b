import { ConsoleLogger, type LoggerService } from "@nestjs/common";

/**
 * Fields never written to a log, whatever their depth: auth headers, secrets, tokens, keys, and
 * form contents (payloads, bodies, message texts, contact details). Code logs ids and outcomes;
 * this list is the net under it (invariant 8).
 */
const REDACTED_FIELDS =
  /authorization|cookie|password|secret|token|api[-_]?key|headervalue|credential|formdata|payload|^body$|^text$|email|phone/i;

export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "[redacted: nested too deep]";
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Date || value instanceof Error) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      REDACTED_FIELDS.test(key) ? "[redacted]" : redact(item, depth + 1),
    ]),
  );
}

/** printMessages' parameters after the messages (context, level, stream, stack, params). */
type PrintRest = Parameters<ConsoleLogger["printMessages"]> extends [unknown[], ...infer Rest] ? Rest : never;

/** Nest's JSON console logger with the redaction list applied to every structured message. */
export class RedactingLogger extends ConsoleLogger {
  constructor() {
    super({ json: true, colors: false });
  }

  protected override printMessages(messages: unknown[], ...rest: PrintRest): void {
    this.emit(
      messages.map((message) => redact(message)),
      ...rest,
    );
  }

  /** Writes redacted messages (tests capture them here). */
  protected emit(messages: unknown[], ...rest: PrintRest): void {
    super.printMessages(messages, ...rest);
  }
}

/** The logger every process uses: JSON lines, redacted. */
export function createLogger(): LoggerService {
  return new RedactingLogger();
}
