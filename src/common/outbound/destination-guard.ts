// The check of a tenant-set outbound URL, run when it is set and again before each call: its form
// (destination-policy.ts), then every address its host resolves to. The answer names the address
// to connect to, so the call goes where the check looked (no DNS rebinding in between). Why a URL
// was refused is logged for the operator and never told to the tenant: whether a name resolves,
// and to what kind of address, would map the internal network (a DNS oracle).
import { CONFIG, type OutboundConfig } from "../../config/sections.js";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { AppError } from "../app-error.js";
import { withTimeout } from "../with-timeout.js";
import { PermanentError, RetryableError } from "./errors.js";
import {
  type Cidr,
  DestinationForbidden,
  destinationUrl,
  forbiddenRange,
  hostOf,
  parseCidrs,
} from "./destination-policy.js";

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Host names to addresses through the system resolver. Tests replace `lookup` (no DNS needed). */
@Injectable()
export class HostResolver {
  lookup(hostname: string): Promise<ResolvedAddress[]> {
    return lookup(hostname, { all: true, verbatim: true });
  }
}

/** A host that does not resolve within this is refused. */
export const RESOLVE_TIMEOUT_MS = 2_000;

/** A URL that passed the check, with the address it was checked at: connect there and nowhere else. */
export interface CheckedDestination {
  url: URL;
  address: string;
  family: 4 | 6;
}

/** The host gave no address within RESOLVE_TIMEOUT_MS (unknown, or the resolver failed). */
export class DestinationUnresolved extends Error {
  constructor() {
    super(`the host does not resolve within ${RESOLVE_TIMEOUT_MS / 1000} s`);
  }
}

@Injectable()
export class DestinationGuard {
  private readonly logger = new Logger("outbound");
  private readonly allowed: Cidr[];

  constructor(
    @Inject(CONFIG.outbound) private readonly config: OutboundConfig,
    private readonly resolver: HostResolver,
  ) {
    this.allowed = parseCidrs(config.destinationAllowCidrs);
  }

  /**
   * The check of a URL a tenant is setting (`field` names it in the error): a refused one is
   * `400 destination_forbidden`, with one message whatever the rule (the log says which). Run it
   * before any transaction: resolving may take up to 2 s.
   */
  async checkSetting(field: string, url: string | undefined): Promise<void> {
    if (url === undefined) return;
    try {
      await this.check(url);
    } catch (error) {
      if (!(error instanceof DestinationForbidden || error instanceof DestinationUnresolved)) throw error;
      throw new AppError(
        400,
        "destination_forbidden",
        `${field} is not an allowed destination. Leadgate calls public https URLs without credentials in them, unless the operator allows http or private ranges.`,
      );
    }
  }

  /**
   * `check` for a side effect about to call: a forbidden destination is a permanent failure
   * (`destination_forbidden`), a host that does not resolve a retryable one (it may come back).
   */
  async checkForCall(value: string): Promise<CheckedDestination> {
    try {
      return await this.check(value);
    } catch (error) {
      if (error instanceof DestinationForbidden) throw new PermanentError("destination_forbidden");
      throw new RetryableError("network");
    }
  }

  /**
   * The URL and the address to call it at. Throws DestinationForbidden (a rule refuses the URL or one
   * of its host's addresses) or DestinationUnresolved, after a warn line saying why.
   */
  async check(value: string): Promise<CheckedDestination> {
    let url: URL;
    try {
      url = destinationUrl(value, this.config.destinationAllowHttp);
    } catch (error) {
      throw this.refused(hostForLog(value), error as Error);
    }
    const host = hostOf(url);
    let addresses: ResolvedAddress[];
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.resolve(host);
    } catch (error) {
      throw this.refused(host, error as Error);
    }
    for (const { address } of addresses) {
      const range = forbiddenRange(address, this.allowed);
      if (range !== undefined) {
        throw this.refused(host, new DestinationForbidden("the host resolves to a non-public address"), {
          address,
          range,
        });
      }
    }
    const [{ address, family }] = addresses as [ResolvedAddress];
    return { url, address, family: family === 6 ? 6 : 4 };
  }

  /** Logs why a destination was refused (host, rule, the address and its class; never the URL), answers `error`. */
  private refused(host: string | undefined, error: Error, found: { address?: string; range?: string } = {}) {
    this.logger.warn({ msg: "outbound destination refused", host, reason: error.message, ...found });
    return error;
  }

  private async resolve(host: string): Promise<ResolvedAddress[]> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await withTimeout(this.resolver.lookup(host), RESOLVE_TIMEOUT_MS, "the resolver");
    } catch {
      throw new DestinationUnresolved();
    }
    if (addresses.length === 0) throw new DestinationUnresolved();
    return addresses;
  }
}

/** The host of a URL that failed the form check, if it has one (no user, password, path or query). */
function hostForLog(value: string): string | undefined {
  try {
    return new URL(value).hostname || undefined;
  } catch {
    return undefined;
  }
}
