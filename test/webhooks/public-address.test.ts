/** Which addresses count as public for webhooks, in every IPv6 spelling (docs/webhooks.md, "Safe targets"). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isPublicAddress } from '../../src/webhooks/public-address.js';
import { targetProblem } from '../../src/webhooks/targets.js';

/** `a.b.c.d` as two hex groups, `aabb:ccdd`. */
function hex(ipv4: string): string {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** `a.b.c.d` XOR 0xffffffff, as Teredo stores the client's address (RFC 4380 §4). */
function obfuscated(ipv4: string): string {
  return hex(ipv4.split('.').map((octet) => 255 - Number(octet)).join('.'));
}

/** Every IPv6 spelling that embeds `ipv4`. */
function embeddings(ipv4: string): string[] {
  const [high, low] = hex(ipv4).split(':') as [string, string];
  const [, , c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  return [
    `::ffff:${ipv4}`, `::ffff:${hex(ipv4)}`, `0:0:0:0:0:ffff:${hex(ipv4)}`, // IPv4-mapped
    `::${ipv4}`, `::${hex(ipv4)}`, // IPv4-compatible
    `::ffff:0:${ipv4}`, `::ffff:0:${hex(ipv4)}`, // SIIT IPv4-translated
    `64:ff9b::${ipv4}`, `64:ff9b::${hex(ipv4)}`, // NAT64 well-known prefix
    `64:ff9b:1::${ipv4}`, `64:ff9b:1:${high}:${c.toString(16)}:${(d << 8).toString(16)}::`, // local-use NAT64, /96 and /48 layouts
    `2002:${high}:${low}::1`, `2002:${hex(ipv4)}:1:2:3:4:5`, // 6to4
    `2001:0:808:808:8000:f227:${obfuscated(ipv4)}`, `2001::${obfuscated(ipv4)}`, // Teredo, the client's address
    `2001:0:${hex(ipv4)}:0:f227:${obfuscated('8.8.8.8')}`, // Teredo, the server's address
    `2600:1f18:1:2:0:5efe:${ipv4}`, `2600:1f18:1:2:200:5efe:${hex(ipv4)}`, // ISATAP
    `2002:808:808:1:0:5efe:${ipv4}`, // ISATAP behind a public 6to4 prefix
    `2001:0:808:808:0:5efe:${obfuscated(ipv4)}`, // Teredo shaped as an ISATAP identifier
  ];
}

const PRIVATE = ['127.0.0.1', '10.1.2.3', '192.168.1.1', '169.254.169.254', '172.16.0.1', '100.64.0.1', '0.0.0.0'];

it('refuses every IPv6 form that embeds a loopback, private, link-local or metadata IPv4 address, as an address and as a URL', () => {
  for (const ipv4 of PRIVATE) {
    assert.equal(isPublicAddress(ipv4), false, ipv4);
    for (const form of embeddings(ipv4)) {
      assert.equal(isPublicAddress(form), false, `${form} (${ipv4})`);
      assert.notEqual(targetProblem(`https://[${form}]/hooks`, false), null, `https://[${form}]/hooks (${ipv4})`);
    }
  }
});

it('allows a public IPv4 address in the forms that reach it: IPv4-mapped, NAT64 64:ff9b::/96, 6to4 and ISATAP', () => {
  for (const form of ['8.8.8.8', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2600:1f18:1:2:200:5efe:8.8.8.8', '2606:4700::1111', '2a00:1450:4001:82a::200e']) {
    assert.equal(isPublicAddress(form), true, form);
    assert.equal(targetProblem(`https://${form.includes(':') ? `[${form}]` : form}/hooks`, false), null, form);
  }
});

it('refuses Teredo, IPv4-compatible, SIIT and local-use NAT64 addresses whatever they embed, and IPv6 outside global unicast', () => {
  const refused = [
    '2001:0:808:808:8000:f227:f7f7:f7f7', // Teredo, server and client 8.8.8.8: 2001::/32 is refused whole
    '::8.8.8.8', // IPv4-compatible, deprecated (RFC 4291 §2.5.5.1)
    '::ffff:0:8.8.8.8', // SIIT IPv4-translated
    '64:ff9b:1::8.8.8.8', // local-use NAT64 (RFC 8215)
    '2001:db8::1', '3fff::1', // documentation
    '::', '::1', '100::1', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'fe80::1%eth0', 'ff02::1', '5f00::1', '4000::1',
    'localhost', 'not an address',
  ];
  for (const address of refused) assert.equal(isPublicAddress(address), false, address);
});
