// The check of a tenant-set outbound URL, run when it is set and again before each call: its form
// (destination-policy.ts), then every address its host resolves to. The answer names the address
// to connect to, so the call goes where the check looked (no DNS rebinding in between).
import { CONFIG, type OutboundConfig } from "../../config/sections.js";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Inject, Injectable } from "@nestjs/common";
import { AppError } from "../app-error.js";
import { withTimeout } from "../with-timeout.js";
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
  private readonly allowed: Cidr[];

  constructor(
    @Inject(CONFIG.outbound) private readonly config: OutboundConfig,
    private readonly resolver: HostResolver,
  ) {
    this.allowed = parseCidrs(config.destinationAllowCidrs);
  }

  /**
   * The check of a URL a tenant is setting (`field` names it in the error): a refused one is
   * `400 destination_forbidden`. Run it before any transaction: resolving may take up to 2 s.
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
        `${field} is refused: ${error.message}. Leadgate calls public https addresses only, unless the operator allows http or private ranges.`,
      );
    }
  }

  /**
   * The URL and the address to call it at. Throws DestinationForbidden (a rule refuses the URL or one
   * of its host's addresses) or DestinationUnresolved.
   */
  async check(value: string): Promise<CheckedDestination> {
    const url = destinationUrl(value, this.config.destinationAllowHttp);
    const host = hostOf(url);
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.resolve(host);
    if (addresses.some(({ address }) => forbiddenRange(address, this.allowed) !== undefined)) {
      throw new DestinationForbidden("the host resolves to a non-public address");
    }
    const [{ address, family }] = addresses as [ResolvedAddress];
    return { url, address, family: family === 6 ? 6 : 4 };
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
