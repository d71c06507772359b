// A destination's circuit breaker, shared by every worker process through Postgres
// (`destination_circuits`; each opening is a row of `destination_circuit_openings`). A destination is
// a URL's origin (scheme, host, port). After CIRCUIT_FAILURE_THRESHOLD consecutive failures
// (timeouts, connection errors, 5xx) its circuit opens: calls are refused with `WaitRequired("circuit")`
// until CIRCUIT_PROBE_SECONDS have passed; then one call, the probe, goes out (half-open). An answer
// closes the circuit; a failure opens it again for another probe period. An opening and a closing
// are told to CircuitEvents (the alerts' destination.failing) in the transaction that records them.
import { CONFIG, type OutboundConfig } from "../../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { PrismaService } from "../../database/prisma.service.js";
import { CIRCUIT_EVENTS, type CircuitEvents } from "./circuit-events.js";
import { RetryableError, WaitRequired } from "./errors.js";

type CircuitState = "closed" | "open" | "half_open";

interface Circuit {
  state: CircuitState;
  failures: number;
  probeAt: Date | null;
}

/**
 * How long a process trusts that a circuit it last saw closed still is (another process may have
 * opened it meanwhile). A circuit that is not closed is read each time: another process's probe may
 * have closed it.
 */
const CACHE_MS = 1_000;

const CLOSED: Circuit = { state: "closed", failures: 0, probeAt: null };

/**
 * The destination of a URL, as the circuit and the concurrency cap count it: its origin (scheme,
 * host, port). URL.origin is "null" for schemes it has no origin for (an SMTP server's `smtp:`,
 * `smtps:`), which would make every such server one destination: scheme, host and port then too.
 */
export function originOf(url: string): string {
  const parsed = new URL(url);
  return parsed.origin !== "null" ? parsed.origin : `${parsed.protocol}//${parsed.host}`;
}

/** A failure that says the destination is unwell (not an answer we dislike): timeout, network, 5xx. */
export function isDestinationFailure(error: unknown): error is RetryableError {
  return error instanceof RetryableError && /^(timeout|network|http_5\d\d)$/.test(error.code);
}

@Injectable()
export class CircuitBreaker {
  private readonly logger = new Logger("circuit");
  /** The circuits this process read or changed last, and when. */
  private readonly known = new Map<string, Circuit & { readAt: number }>();

  constructor(
    private readonly prisma: PrismaService,
    @Inject(CONFIG.outbound) private readonly config: OutboundConfig,
    @Inject(CIRCUIT_EVENTS) private readonly events: CircuitEvents,
  ) {}

  /**
   * Throws `WaitRequired("circuit")` while the circuit of `origin` is open (or half-open with a
   * probe out) and no probe is due; free while it is closed (this process's view of the last second).
   */
  async check(origin: string): Promise<void> {
    const circuit = await this.read(origin);
    if (circuit.state !== "closed" && circuit.probeAt && circuit.probeAt.getTime() > Date.now()) {
      throw this.waitFor(circuit);
    }
  }

  /**
   * May a call to `origin` go out now? Resolves `false` for an ordinary call and `true` for the
   * probe of an open circuit (this process won it); throws `WaitRequired("circuit")` while the
   * circuit is open, or half-open with another process's probe out.
   */
  async admit(origin: string): Promise<boolean> {
    await this.check(origin);
    if (this.known.get(origin)?.state === "closed") return false;
    // The probe is due: the process whose statement moves the circuit to half-open sends it.
    const { rows } = await this.prisma.pool.query<{ probeAt: Date }>(
      `UPDATE destination_circuits SET state = 'half_open', updated_at = now(),
              probe_at = now() + $2::int * interval '1 second'
       WHERE origin = $1 AND state IN ('open', 'half_open') AND probe_at <= now()
       RETURNING probe_at AS "probeAt"`,
      [origin, this.config.circuitProbeSeconds],
    );
    if (rows[0]) {
      this.remember(origin, { state: "half_open", failures: 0, probeAt: rows[0].probeAt });
      return true;
    }
    const now = await this.read(origin);
    if (now.state === "closed") return false;
    throw this.waitFor(now);
  }

  /**
   * The wait of a job that found the circuit open: until the probe time plus a random part of a
   * probe period, so the jobs of a circuit come back spread out (the first one after the probe time
   * probes) rather than all at once; a closing ends their waits at once (DestinationGuard). While a
   * probe is out (half-open), a job looks again in a second or two: the probe's answer is near,
   * and a job that decides to wait just as the probe closes the circuit would miss the release.
   */
  private waitFor(circuit: Circuit): WaitRequired {
    if (circuit.state === "half_open") {
      return new WaitRequired("circuit", new Date(Date.now() + 1000 + Math.random() * 1000));
    }
    const probeAt = Math.max(circuit.probeAt?.getTime() ?? 0, Date.now());
    return new WaitRequired(
      "circuit",
      new Date(probeAt + Math.random() * this.config.circuitProbeSeconds * 1000),
    );
  }

  /**
   * The destination answered: its failure count resets, and an open circuit closes. Resolves
   * `true` when this call closed it (its waiting jobs may flow now). Free when nothing was failing.
   */
  async succeeded(origin: string): Promise<boolean> {
    const circuit = this.known.get(origin);
    if (circuit && circuit.state === "closed" && circuit.failures === 0) return false;
    const closed = await this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ closed: boolean }[]>(
        `WITH closed AS (
           UPDATE destination_circuits
           SET closed_at = CASE WHEN state = 'closed' THEN closed_at ELSE now() END,
               state = 'closed', consecutive_failures = 0, probe_at = NULL, updated_at = now()
           WHERE origin = $1 AND (state <> 'closed' OR consecutive_failures > 0)
           RETURNING closed_at = now() AS closed
         ), recorded AS (
           UPDATE destination_circuit_openings SET closed_at = now()
           WHERE origin = $1 AND closed_at IS NULL AND EXISTS (SELECT 1 FROM closed WHERE closed)
         )
         SELECT closed FROM closed`,
        origin,
      );
      if (rows[0]?.closed !== true) return false;
      await this.events.closed(tx, origin);
      return true;
    });
    this.remember(origin, CLOSED);
    if (closed) this.logger.log({ msg: "destination circuit closed: the probe was answered", origin });
    return closed;
  }

  /**
   * The call failed as `error` (a destination failure: see isDestinationFailure). Counts it; the
   * threshold-th consecutive failure, or a failed probe, opens the circuit until the next probe.
   * Resolves the circuit as it now is.
   */
  async failed(origin: string, error: RetryableError): Promise<Circuit> {
    const rows = await this.prisma.$transaction(async (tx) => {
      const counted = await tx.$queryRawUnsafe<(Circuit & { opened: boolean })[]>(
        `WITH counted AS (
           INSERT INTO destination_circuits AS d (origin, state, consecutive_failures, last_error, opened_at, probe_at)
           VALUES ($1, CASE WHEN $3 <= 1 THEN 'open' ELSE 'closed' END, 1, $2,
                   CASE WHEN $3 <= 1 THEN now() END,
                   CASE WHEN $3 <= 1 THEN now() + $4::int * interval '1 second' END)
           ON CONFLICT (origin) DO UPDATE SET
             consecutive_failures = d.consecutive_failures + 1,
             last_error = EXCLUDED.last_error,
             updated_at = now(),
             opened_at = CASE WHEN d.state = 'closed' AND d.consecutive_failures + 1 >= $3 THEN now() ELSE d.opened_at END,
             probe_at = CASE WHEN d.state = 'half_open' OR (d.state = 'closed' AND d.consecutive_failures + 1 >= $3)
                             THEN now() + $4::int * interval '1 second' ELSE d.probe_at END,
             state = CASE WHEN d.state = 'half_open' OR d.consecutive_failures + 1 >= $3 THEN 'open' ELSE d.state END
           RETURNING state, consecutive_failures AS failures, probe_at AS "probeAt",
                     state = 'open' AND opened_at = now() AS opened
         ), recorded AS (
           INSERT INTO destination_circuit_openings (origin, opened_at, failures, last_error)
           SELECT $1, now(), failures, $2 FROM counted WHERE opened
         )
         SELECT * FROM counted`,
        origin,
        error.code,
        this.config.circuitFailureThreshold,
        this.config.circuitProbeSeconds,
      );
      const row = counted[0]!;
      if (row.opened) await this.events.opened(tx, { origin, failures: row.failures, lastError: error.code });
      return counted;
    });
    const { opened, ...circuit } = rows[0]!;
    this.remember(origin, circuit);
    if (opened) {
      this.logger.warn({
        msg: "destination circuit opened: its jobs wait for a probe",
        origin,
        failures: circuit.failures,
        lastError: error.code,
      });
    }
    return circuit;
  }

  private async read(origin: string): Promise<Circuit> {
    const cached = this.known.get(origin);
    if (cached?.state === "closed" && Date.now() - cached.readAt < CACHE_MS) return cached;
    const { rows } = await this.prisma.pool.query<Circuit>(
      `SELECT state, consecutive_failures AS failures, probe_at AS "probeAt"
       FROM destination_circuits WHERE origin = $1`,
      [origin],
    );
    const circuit = rows[0] ?? CLOSED;
    this.remember(origin, circuit);
    return circuit;
  }

  private remember(origin: string, circuit: Circuit): void {
    this.known.set(origin, { ...circuit, readAt: Date.now() });
  }
}
