import { ConsoleLogger, type LoggerService, type LogLevel as NestLevel } from "@nestjs/common";
import type { LogLevel } from "../config/config.js";
import { pino, type Logger as Pino } from "pino";

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

/** Nest's log levels, as pino writes them (a line still says `"level":"log"`, as Nest's JSON lines do). */
const PINO_LEVEL = {
  log: "info",
  error: "error",
  warn: "warn",
  debug: "debug",
  verbose: "trace",
  fatal: "fatal",
} as const;
const NEST_LEVEL: Record<string, string> = Object.fromEntries(
  Object.entries(PINO_LEVEL).map(([nest, level]) => [level, nest]),
);

/**
 * A pino writing Nest's JSON line shape (level, pid, timestamp, message, context, stack) to `fd`
 * asynchronously: lines written while a write is in flight go out together in the next one (one
 * system call for many lines under load, none waited for). Buffered lines are flushed when the
 * process exits.
 */
function jsonLines(fd: 1 | 2): Pino {
  return pino(
    {
      level: "trace", // Nest's logger decides what is written (its log levels); pino writes it
      base: { pid: process.pid },
      timestamp: () => `,"timestamp":${Date.now()}`,
      formatters: { level: (label) => ({ level: NEST_LEVEL[label] ?? label }) },
    },
    pino.destination({ fd, sync: false }),
  );
}

/** Nest's JSON logger with the redaction list applied to every structured message, written by pino. */
export class RedactingLogger extends ConsoleLogger {
  private out?: { stdout: Pino; stderr: Pino };

  constructor(level: LogLevel = "info") {
    super({ json: true, colors: false, logLevels: NEST_LEVELS[level] });
  }

  /**
   * Nest's boot chatter (a line per route mapped, per controller, per module initialized: about 200
   * lines before "api listening") is `debug`, not `info`.
   */
  override log(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    if (typeof context === "string" && BOOT_CHATTER.has(context)) return this.debug(message, ...params);
    super.log(message, ...params);
  }

  protected override printMessages(messages: unknown[], ...rest: PrintRest): void {
    this.emit(
      messages.map((message) => redact(message)),
      ...rest,
    );
  }

  /** Writes redacted messages (tests capture them here). */
  protected emit(messages: unknown[], ...rest: PrintRest): void {
    const [context, logLevel = "log", writeStreamType, stack] = rest;
    this.out ??= { stdout: jsonLines(1), stderr: jsonLines(2) };
    const out = this.out[writeStreamType ?? "stdout"];
    for (const message of messages) {
      const line = {
        message: message instanceof Error ? { name: message.name, message: message.message } : message,
        ...(context ? { context } : {}),
        ...(stack ? { stack } : {}),
      };
      out[PINO_LEVEL[logLevel]](line);
    }
  }
}

/** The contexts of Nest's boot lines: routes mapped, controllers resolved, modules initialized. */
const BOOT_CHATTER = new Set(["RouterExplorer", "RoutesResolver", "InstanceLoader"]);

/** Nest's levels written at each LOG_LEVEL (Nest's `log` is pino's `info`). */
const NEST_LEVELS: Record<LogLevel, NestLevel[]> = {
  error: ["fatal", "error"],
  warn: ["fatal", "error", "warn"],
  info: ["fatal", "error", "warn", "log"],
  debug: ["fatal", "error", "warn", "log", "debug", "verbose"],
};

/** The logger every process uses: JSON lines, redacted, from `level` (LOG_LEVEL) up. */
export function createLogger(level: LogLevel = "info"): LoggerService {
  return new RedactingLogger(level);
}
