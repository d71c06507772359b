// Which tenant-set outbound URLs Leadgate may call (docs/design.md invariant 10): the pure rules. The
// URL's form is checked first (scheme, no credentials), then every address its host resolves to.
// Address classes come from ipaddr.js (its `range()`), never from a hand-written table.
import ipaddr from "ipaddr.js";

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A destination refused by the rules; the message says which, in words a tenant may read (never the address). */
export class DestinationForbidden extends Error {}

export function parseCidrs(cidrs: readonly string[]): Cidr[] {
  return cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
}

/**
 * The URL when its form may be called: `https` (or `http` when allowed) and no user or password.
 * The WHATWG parser has already turned decimal, hex and octal IPv4 forms into dotted quads.
 */
export function destinationUrl(value: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DestinationForbidden("not a URL");
  }
  const schemes = allowHttp ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) {
    throw new DestinationForbidden(allowHttp ? "not http(s)" : "not https");
  }
  if (url.username !== "" || url.password !== "") {
    throw new DestinationForbidden("credentials in the URL");
  }
  return url;
}

/** The URL's host without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/**
 * Why an address may not be called (ipaddr.js's range name: `loopback`, `private`, `linkLocal`,
 * `carrierGradeNat`, `uniqueLocal`, `multicast`, `unspecified`, `reserved`, ...), or undefined for a
 * public unicast address or one inside an allowed CIDR. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is
 * judged as the IPv4 address it maps to. Everything that is not plain `unicast` is refused,
 * including the IPv6 forms that embed an IPv4 address (6to4, Teredo, NAT64).
 */
export function forbiddenRange(address: string, allowed: readonly Cidr[]): string | undefined {
  if (!ipaddr.isValid(address)) return "not an IP address";
  const ip = ipaddr.process(address);
  if (allowed.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))) return undefined;
  const range = ip.range();
  return range === "unicast" ? undefined : range;
}
