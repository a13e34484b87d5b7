/**
 * What a per-address rate limit counts by (rate-limit.ts). An IPv6 client counts by its /64: a
 * site is given a /64 or more (RFC 6177 §2) and picks its interface identifiers freely (RFC 8981
 * temporary addresses), so keying the full /128 would hand one client 2^64 fresh counters. An
 * IPv4-mapped address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2), as a dual-stack socket reports an IPv4
 * client, is that IPv4 address: one client, one counter, whichever way its address is written.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (zone and embedded IPv4 included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted !== undefined) {
    const [a, b, c, d] = dotted.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

export function addressKey(address: string): string {
  if (isIPv4(address) || !isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  if (groups.slice(0, 6).join(',') === '0,0,0,0,0,65535') {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}
