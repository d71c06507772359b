// destination.failing, from the circuit breaker's openings and closings (CircuitEvents,
// src/common/outbound/circuit-events.ts), in the transaction that records them: an opening raises it
// for every live (not disabled) connection whose CRM destination is on that origin, whatever its
// tenant (tenants share a destination's circuit); the closing resolves them all (their `subject` is
// the origin).
import { Injectable } from "@nestjs/common";
import { originOf } from "../common/outbound/circuit-breaker.js";
import type { CircuitEvents, CircuitOpening } from "../common/outbound/circuit-events.js";
import type { Tx } from "../database/transactions.js";
import { AlertBook } from "./alert-book.js";

const TYPE = "destination.failing" as const;

/** Whether `url` (a stored CRM destination) is on `origin`; a URL that does not parse is on none. */
function onOrigin(url: string, origin: string): boolean {
  try {
    return originOf(url) === origin;
  } catch {
    return false;
  }
}

@Injectable()
export class DestinationAlerts implements CircuitEvents {
  constructor(private readonly alerts: AlertBook) {}

  async opened(tx: Tx, { origin, failures, lastError }: CircuitOpening): Promise<void> {
    // Platform-wide by nature: the connections of every tenant whose CRM URL names the origin's
    // host, then those exactly on the origin (as URL.origin writes it: scheme, host, port).
    const candidates = await tx.$queryRawUnsafe<
      { id: string; tenantId: string; displayName: string; url: string }[]
    >(
      `SELECT id, tenant_id AS "tenantId", display_name AS "displayName", settings #>> '{crmDestination,url}' AS url
       FROM connections
       WHERE status <> 'disabled' AND strpos(lower(settings #>> '{crmDestination,url}'), lower($1)) > 0
       ORDER BY tenant_id, id`,
      new URL(origin).hostname,
    );
    await this.alerts.raiseMany(
      tx,
      candidates
        .filter((connection) => onOrigin(connection.url, origin))
        .map((connection) => ({
          tenantId: connection.tenantId,
          type: TYPE,
          connectionId: connection.id,
          operation: "crm-delivery",
          errorCode: "circuit_open",
          subject: origin,
          summary: `The CRM destination ${origin} of connection "${connection.displayName}" keeps failing (${failures} consecutive failures, last: ${lastError ?? "unknown"}). Its deliveries wait for it.`,
        })),
    );
  }

  async closed(tx: Tx, origin: string): Promise<void> {
    await this.alerts.clearSubject(tx, TYPE, origin);
  }
}
