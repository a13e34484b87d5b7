/** Which webhook targets are refused (docs/webhooks.md, "Safe targets"). */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { it } from 'node:test';
import { isPublicAddress, publicOnlyLookup, targetProblem } from '../../src/webhooks/targets.js';
import { deliveryAgent, send } from '../../src/webhooks/send.js';
import { startReceiver } from '../support/webhook-receiver.js';

it('refuses plain http, loopback, private, link-local, metadata and shared addresses', () => {
  for (const url of [
    'http://hooks.example.com/x',
    'https://127.0.0.1/x',
    'https://localhost/x',
    'https://api.localhost/x',
    'https://10.1.2.3/x',
    'https://172.16.0.1/x',
    'https://192.168.1.1/x',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/x',
    'https://0.0.0.0/x',
    'https://[::1]/x',
    'https://[fd00:ec2::254]/x',
    'https://[fe80::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://user:pass@hooks.example.com/x',
    'ftp://hooks.example.com/x',
    'not a url',
  ]) {
    assert.notEqual(targetProblem(url, false), null, url);
  }
  assert.equal(targetProblem('https://hooks.example.com/stride', false), null);
  assert.equal(targetProblem('https://93.184.216.34/x', false), null);
  assert.equal(targetProblem('http://127.0.0.1:8080/x', true), null, 'WEBHOOK_ALLOW_PRIVATE lifts both rules');
});

it('judges addresses, IPv4-mapped IPv6 by its IPv4', () => {
  assert.equal(isPublicAddress('8.8.8.8'), true);
  assert.equal(isPublicAddress('2606:4700::1111'), true);
  assert.equal(isPublicAddress('::ffff:10.0.0.1'), false);
  assert.equal(isPublicAddress('::ffff:8.8.8.8'), true);
  assert.equal(isPublicAddress('nonsense'), false);
});

it('refuses a name that resolves to a private address, at the address actually connected to', async (t) => {
  const error = await new Promise<Error | null>((resolve) => publicOnlyLookup('localhost', {}, (err) => resolve(err)));
  assert.match(String(error?.message), /localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);

  // A message whose URL names this machine (a name that passes the URL check, resolving to a
  // loopback or private address) never reaches the receiver listening there.
  const addresses = await lookup(hostname(), { all: true });
  if (addresses.every((entry) => isPublicAddress(entry.address))) {
    t.skip(`${hostname()} resolves only to public addresses (${addresses.map((entry) => entry.address).join(', ')}): no name here passes the URL check and leads to this machine; the delivery part was not run`);
    return;
  }
  const receiver = await startReceiver();
  const agent = deliveryAgent(false);
  try {
    const port = new URL(receiver.url).port;
    const message = { id: 'x', kind: 'delivery' as const, endpointId: 'we_x', url: `https://${hostname()}:${port}/hooks`, secrets: ['whsec_' + Buffer.alloc(32).toString('base64')], messageId: 'msg_x', payload: '{}', attempts: 0, createdAt: 0, challenge: null };
    const answer = await send(agent, message, false);
    assert.equal(answer.ok, false);
    assert.match(String(answer.error), /not a public address/);
    assert.equal(receiver.received.length, 0);
  } finally {
    await agent.close();
    await receiver.close();
  }
});
