// The circuit breaker's port for what a destination's circuit opening and closing mean beyond its
// rows: the alerts module's destination.failing (src/alerts/destination-alerts.ts) implements it,
// this layer only calls it, inside the transaction that records the opening or the closing, so what
// it writes commits with that row or not at all.
import type { InjectionToken } from "@nestjs/common";
import type { Tx } from "../../database/transactions.js";

/** A circuit that just opened: its origin, the consecutive failures that opened it, the last one's code. */
export interface CircuitOpening {
  origin: string;
  failures: number;
  lastError: string | null;
}

export interface CircuitEvents {
  opened(tx: Tx, opening: CircuitOpening): Promise<void>;
  /** The probe was answered: the circuit of `origin` closed. */
  closed(tx: Tx, origin: string): Promise<void>;
}

/** The injection token of the CircuitEvents (a global module of the layer above provides it). */
export const CIRCUIT_EVENTS: InjectionToken = "outbound:circuit-events";
