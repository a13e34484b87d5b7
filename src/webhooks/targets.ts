/**
 * Where webhooks may be sent (docs/webhooks.md, "Safe targets"): `https://` URLs of public
 * addresses only — no loopback, private, link-local, shared or metadata addresses — checked on
 * the address actually connected to, so a name that resolves to a private address (DNS
 * rebinding included) is refused too. WEBHOOK_ALLOW_PRIVATE lifts both rules.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether `address` (an IP literal) is a public unicast address. IPv4-mapped IPv6 is judged by its IPv4. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPublicAddress(mapped);
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why `raw` cannot be a webhook URL, or null. Names are checked again when connecting. */
export function targetProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'the URL is not a valid absolute URL';
  }
  if (raw.length > 2000) return 'the URL is longer than 2000 characters';
  if (url.username || url.password) return 'the URL must not carry credentials';
  if (allowPrivate) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'the URL must be http:// or https://';
  if (url.protocol !== 'https:') return 'the URL must be https://';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !isPublicAddress(host)) return 'the URL must name a public address, not a private, loopback or link-local one';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'the URL must name a public address, not a private, loopback or link-local one';
  return null;
}

/** A dns.lookup for the delivery connections that fails for any address that is not public. */
export function publicOnlyLookup(hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) return callback(Object.assign(new Error(`${hostname} resolves to ${refused.address}, which is not a public address`), { code: 'ENOTPUBLIC' }), []);
    if ((options as { all?: boolean }).all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
