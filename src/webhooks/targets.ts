/**
 * Where webhooks may be sent (docs/webhooks.md, "Safe targets"): `https://` URLs of public
 * addresses only (public-address.ts) — no loopback, private, link-local, shared or metadata
 * addresses, in any spelling — checked on the URL, and again for every connection: on each address
 * a name resolves to (DNS rebinding included), and on the address actually connected to, a URL's
 * literal address included. WEBHOOK_ALLOW_PRIVATE lifts these rules.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { isPublicAddress } from './public-address.js';

/** Said with a refusal that WEBHOOK_ALLOW_PRIVATE lifts: a developer's own receiver is often one. */
export const ALLOW_PRIVATE_HINT = 'for development, the operator can allow http:// and private addresses with WEBHOOK_ALLOW_PRIVATE=true';

/** Why `raw` cannot be a webhook URL, or null. Every address is checked again when connecting. */
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
  if (url.protocol !== 'https:') return `the URL must be https:// (${ALLOW_PRIVATE_HINT})`;
  // A trailing dot names the same host (`localhost.`).
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  const notPublic = `the URL must name a public address, not a private, loopback or link-local one (${ALLOW_PRIVATE_HINT})`;
  if (isIP(host) !== 0 && !isPublicAddress(host)) return notPublic;
  if (host === 'localhost' || host.endsWith('.localhost')) return notPublic;
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

/**
 * The delivery connections' connector: `base` (which resolves names with publicOnlyLookup) for
 * public addresses only. A literal address in the URL is never looked up, so it is judged before
 * connecting; and every connection is judged on the address it reached, whatever named it.
 */
export function publicOnlyConnector(base: buildConnector.connector): buildConnector.connector {
  const refuse = (message: string) => Object.assign(new Error(message), { code: 'ENOTPUBLIC' });
  return (options, callback) => {
    if (isIP(options.hostname) !== 0 && !isPublicAddress(options.hostname)) return callback(refuse(`${options.hostname} is not a public address`), null);
    base(options, (...result) => {
      const [error, socket] = result;
      if (error) return callback(error, null);
      const address = socket.remoteAddress ?? 'unknown';
      if (isPublicAddress(address)) return callback(null, socket);
      socket.destroy();
      return callback(refuse(`the connection to ${options.hostname} reached ${address}, which is not a public address`), null);
    });
  };
}
