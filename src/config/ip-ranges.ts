// Address ranges (CIDRs) for allowlists, checked with ipaddr.js.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export type IpRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * A CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a single address (a range of one). Only the plain
 * dotted and colon forms are accepted (not `127.1` or `0x7f.0.0.1`); undefined when malformed.
 * IPv4-mapped IPv6 ranges are taken as the IPv4 range they map.
 */
export function parseIpRange(text: string): IpRange | undefined {
  const [address = "", bits, ...rest] = text.split("/");
  if (rest.length > 0 || isIP(address) === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
    return undefined;
  }
  const parsed = ipaddr.parse(address);
  const width = bits === undefined ? (parsed.kind() === "ipv4" ? 32 : 128) : Number(bits);
  if (width > (parsed.kind() === "ipv4" ? 32 : 128)) return undefined;
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() && width >= 96) {
    return [parsed.toIPv4Address(), width - 96];
  }
  return [parsed, width];
}

/** True when `ip` (IPv4-mapped IPv6 counts as its IPv4 address) lies in one of the ranges. */
export function inIpRanges(ip: string, ranges: readonly IpRange[]): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  return ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}
