// A backfill's count of the provider's leads inside its HTTP request, bounded in time (api.md
// backfill row: a dry run answers `200 { matched }` when its count is done within 10 s). The scan's
// provider calls are paced by the provider's quota, so a long window can take minutes: past the
// bound the count stops calling the provider and the caller hands the work to the worker.
import { Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { classify, WaitRequired } from "../common/outbound/errors.js";
import { ProviderTokens } from "../connections/provider-tokens.js";
import { ListingUnavailable } from "../providers/lead-source.js";
import type { Provider } from "../providers/provider-event.js";
import { BACKFILL_MAX_LEADS } from "./backfill-limits.js";
import { LeadScan } from "./lead-scan.js";

/** How long a request counts before the count goes on in the worker (api.md: 10 s). */
const COUNT_IN_REQUEST_MS = 10_000;

export interface CountedConnection {
  id: string;
  tenantId: string;
  provider: string;
  externalAccountId: string;
}

export const notAvailable = (message: string) => new AppError(422, "backfill_not_available", message);

@Injectable()
export class BackfillCounter {
  constructor(
    private readonly tokens: ProviderTokens,
    private readonly scans: LeadScan,
  ) {}

  /**
   * The window's leads on the provider, read now; `null` when the count was not done within
   * COUNT_IN_REQUEST_MS (it then makes no further provider call). A provider's refusal is the
   * AppError the route answers with.
   */
  async withinRequest(
    connection: CountedConnection,
    window: { from: Date; to: Date },
  ): Promise<number | null> {
    const stop = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), COUNT_IN_REQUEST_MS);
    });
    const counting = this.count(connection, window, stop.signal);
    // Past the bound its end (the abort, at its next provider call) is nobody's to answer.
    counting.catch(() => undefined);
    try {
      return await Promise.race([counting, timeUp]);
    } finally {
      clearTimeout(timer);
      stop.abort();
    }
  }

  private async count(
    connection: CountedConnection,
    window: { from: Date; to: Date },
    signal: AbortSignal,
  ): Promise<number> {
    try {
      const token = await this.tokens.current(connection);
      const scan = await this.scans.scan(
        {
          tenantId: connection.tenantId,
          connectionId: connection.id,
          provider: connection.provider as Provider,
          account: { externalAccountId: connection.externalAccountId, token },
        },
        { ...window, maxLeads: BACKFILL_MAX_LEADS },
        signal,
      );
      return scan.matched;
    } catch (error) {
      if (signal.aborted) throw error;
      throw refusal(error);
    }
  }
}

/** What the route answers when the provider's list cannot be read. */
function refusal(error: unknown): AppError {
  if (error instanceof ListingUnavailable) {
    return notAvailable(
      `The provider offers no list of this account's leads (${error.code}): backfill is manual.`,
    );
  }
  if (error instanceof WaitRequired) {
    const seconds = Math.max(1, Math.ceil((error.retryAt.getTime() - Date.now()) / 1000));
    return new AppError(
      429,
      "provider_quota",
      "The provider's call budget is spent; retry later.",
      undefined,
      {
        "retry-after": String(seconds),
      },
    );
  }
  const { code, kind } = classify(error);
  if (kind === "credential") {
    return new AppError(
      409,
      "credential_error",
      "The provider refused the connection's credentials; reconnect it.",
      { code },
    );
  }
  return new AppError(502, "provider_error", "The provider's list of leads could not be read; retry later.", {
    code,
  });
}
