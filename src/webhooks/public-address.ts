/**
 * Whether an IP address is a public unicast address, one a webhook may be sent to
 * (docs/webhooks.md, "Safe targets").
 *
 * IPv4: every address outside the special-purpose blocks (RFC 6890 and IANA's registry).
 * IPv6: global unicast only, 2000::/3 (RFC 4291 §2.4), outside its special-purpose blocks — an
 * allowlist, so that a form nobody listed (IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, the
 * local-use NAT64 prefix, discard, unique local, link-local, multicast) is refused by default.
 * An IPv6 address that carries an IPv4 address the packets are delivered to is judged by that
 * IPv4 address, whatever its spelling (`::ffff:127.0.0.1` and `::ffff:7f00:1` alike).
 */
import { BlockList, isIP } from 'node:net';
import { ipv4Of as ipv4, ipv6Groups } from '../security/ip-address.js';

/** RFC 6890's blocks, with 192.88.99.0/24 (the 6to4 relays' anycast, deprecated by RFC 7526). */
const SPECIAL_IPV4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) SPECIAL_IPV4.addSubnet(network, prefix, 'ipv4');

const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** Special-purpose blocks inside 2000::/3 that are no place for a webhook receiver. */
const SPECIAL_GLOBAL_IPV6 = new BlockList();
// 2001::/23, IETF protocol assignments (RFC 2928), not globally reachable by default. It holds
// Teredo, 2001::/32 (RFC 4380 §4): the client's IPv4 address sits in the low 32 bits, XOR
// 0xffffffff, and a relay sends the packets there. Teredo is a NAT-traversal scheme for client
// hosts, not for servers, so the whole prefix is refused rather than decoded.
SPECIAL_GLOBAL_IPV6.addSubnet('2001::', 23, 'ipv6');
SPECIAL_GLOBAL_IPV6.addSubnet('2001:db8::', 32, 'ipv6'); // documentation (RFC 3849)
SPECIAL_GLOBAL_IPV6.addSubnet('3fff::', 20, 'ipv6'); // documentation (RFC 9637)

export function isPublicAddress(address: string): boolean {
  switch (isIP(address)) {
    case 4:
      return !SPECIAL_IPV4.check(address, 'ipv4');
    case 6:
      return isPublicIPv6(address);
    default:
      return false;
  }
}

function isPublicIPv6(address: string): boolean {
  // A zone (`fe80::1%eth0`) scopes a link-local or site address: never a public one.
  if (address.includes('%')) return false;
  const groups = ipv6Groups(address);
  if (groups === null) return false;
  const translated = translatedIPv4(groups);
  if (translated !== null) return isPublicAddress(translated);
  if (!GLOBAL_UNICAST.check(address, 'ipv6') || SPECIAL_GLOBAL_IPV6.check(address, 'ipv6')) return false;
  return tunnelledIPv4(groups).every(isPublicAddress);
}

/**
 * The IPv4 address of the two forms outside 2000::/3 whose packets go to one, and which stay
 * allowed when it is public:
 * - IPv4-mapped, ::ffff:0:0/96 (RFC 4291 §2.5.5.2): the socket connects to the IPv4 address itself;
 * - NAT64's well-known prefix, 64:ff9b::/96 (RFC 6052 §2.1, the /96 layout of §2.2): a translator
 *   forwards to the IPv4 address in the low 32 bits. An IPv6-only network with DNS64 reaches IPv4
 *   receivers this way; RFC 6052 §3.1 forbids non-global ones, but a translator may not enforce it.
 * The other forms outside 2000::/3 that embed an IPv4 address are refused whole: IPv4-compatible
 * ::/96 (deprecated, RFC 4291 §2.5.5.1), SIIT's IPv4-translated ::ffff:0:0:0/96 (RFC 2765 §2.1,
 * gone from RFC 6145 and RFC 7915), and the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215, where
 * its operator chooses the prefix length and so where the IPv4 address sits). So is Teredo, in
 * 2001::/23. A network's own NAT64 prefix (RFC 6052 §2.2) looks like any global address and
 * cannot be told from one.
 */
function translatedIPv4(g: readonly number[]): string | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4(g[6]!, g[7]!);
  return null;
}

/**
 * The IPv4 addresses a global address tunnels to, all of which must be public:
 * - 6to4, 2002::/16 (RFC 3056 §2): a 6to4 router or relay sends to the IPv4 address in bits 16–47;
 * - an ISATAP interface identifier, 0:5efe:a.b.c.d or 200:5efe:a.b.c.d under any /64 (RFC 5214
 *   §6.1): an ISATAP host sends to the IPv4 address in the low 32 bits.
 */
function tunnelledIPv4(g: readonly number[]): string[] {
  const addresses: string[] = [];
  if (g[0] === 0x2002) addresses.push(ipv4(g[1]!, g[2]!));
  if ((g[4]! & 0xfdff) === 0 && g[5] === 0x5efe) addresses.push(ipv4(g[6]!, g[7]!));
  return addresses;
}
