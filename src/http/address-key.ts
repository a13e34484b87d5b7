/**
 * What a per-address rate limit counts by (rate-limit.ts). An IPv6 client counts by its /64: a
 * site is given a /64 or more (RFC 6177 §2) and picks its interface identifiers freely (RFC 8981
 * temporary addresses), so keying the full /128 would hand one client 2^64 fresh counters. An
 * IPv4-mapped address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2), as a dual-stack socket reports an IPv4
 * client, is that IPv4 address: one client, one counter, whichever way its address is written.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { ipv4Of, ipv6Groups } from '../security/ip-address.js';

export function addressKey(address: string): string {
  if (isIPv4(address) || !isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  if (groups.slice(0, 6).join(',') === '0,0,0,0,0,65535') {
    return ipv4Of(groups[6]!, groups[7]!);
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}
