/**
 * Webhooks from real `stride serve` processes: a message committed before the process was killed
 * is delivered after a restart, and three processes on one PostgreSQL deliver each message once.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';
import { freePort, startServer } from '../support/cli.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { createFixture, obtainTokens, type Tokens } from '../oauth/flow.js';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import type { WebhookEndpoint } from '../../src/store/webhooks.js';

cheapPasswordHashing();

const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_COALESCE: '0', RATE_LIMIT: 'off' };

async function setUp(dialect: 'sqlite' | 'postgres', receiver: Receiver): Promise<{ t: TestApp; tokens: Tokens; endpoint: WebhookEndpoint }> {
  const t = await createTestApp(dialect, ENV);
  const fixture = await createFixture(t);
  const tokens = await obtainTokens(t, fixture);
  const endpoint = await addEndpoint(t.database.stores.webhooks, t.config, fixture.app.id, { url: receiver.url, events: ['steps.updated'] }, t.clock());
  return { t, tokens, endpoint };
}

function upload(port: number, tokens: Tokens, minute: number): Promise<Response> {
  const start = Math.floor(Date.now() / 86_400_000) * 86400 - 86400 + minute * 60;
  return fetch(`http://127.0.0.1:${port}/v1/users/me/activities/steps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ samples: [{ start_time: start, value: 42 }] }),
  });
}

it('delivers after a restart what a killed process had committed but not delivered', async () => {
  const receiver = await startReceiver();
  const { t, tokens, endpoint } = await setUp('sqlite', receiver);
  const servers: ChildProcess[] = [];
  try {
    const port = await freePort();
    servers.push(await startServer(port, { ...ENV, DATABASE_URL: t.database.url }));
    await receiver.waitFor('webhook.verification');
    receiver.failNext(1000);
    assert.equal((await upload(port, tokens, 1)).status, 200);
    servers[0]!.kill('SIGKILL');
    await new Promise((resolve) => servers[0]!.once('exit', resolve));
    assert.equal(receiver.received.filter((m) => m.payload.type === 'steps.updated').length, 0);

    receiver.failNext(0);
    servers.push(await startServer(port, { ...ENV, DATABASE_URL: t.database.url }));
    // The killed process may have claimed the message just before it died: it is due again when
    // that claim's lease ends (worker.ts, 30 s), or after the first retry's delay if an attempt failed.
    const [delivered] = await receiver.waitFor('steps.updated', 1, 45_000);
    assert.ok(receiver.verifies(delivered!, endpoint.secret));
    assert.equal(delivered!.payload.data.ranges.length, 1);
  } finally {
    for (const server of servers) server.kill('SIGKILL');
    await receiver.close();
    await t.close();
  }
});

if (DIALECTS.includes('postgres')) {
  let receiver: Receiver;
  let setup: Awaited<ReturnType<typeof setUp>>;
  const servers: ChildProcess[] = [];
  const ports: number[] = [];
  before(async () => {
    receiver = await startReceiver();
    setup = await setUp('postgres', receiver);
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    // Each server is kept as soon as it is up: when one fails to start, `after` still stops those
    // that did (left running, they would hold the file's process open until its time limit).
    const starts = await Promise.allSettled(ports.map((port) => startServer(port, { ...ENV, DATABASE_URL: setup.t.database.url }).then((server) => servers.push(server))));
    const failed = starts.find((start): start is PromiseRejectedResult => start.status === 'rejected');
    if (failed) throw failed.reason;
  });
  after(async () => {
    for (const server of servers) server.kill('SIGKILL');
    await receiver?.close();
    await setup?.t.close();
  });

  it('three processes on PostgreSQL deliver every message once, none sent twice at once', async () => {
    await receiver.waitFor('webhook.verification');
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => upload(ports[i % 3]!, setup.tokens, i).then((r) => r.status)));
    assert.deepEqual(new Set(statuses), new Set([200]));
    const delivered = await receiver.waitFor('steps.updated', 30, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // time for a duplicate to show up
    const all = receiver.received.filter((m) => m.payload.type === 'steps.updated');
    assert.equal(all.length, 30, 'each message once');
    assert.equal(new Set(all.map((m) => m.id)).size, 30);
    assert.ok(delivered.every((message) => receiver.verifies(message, setup.endpoint.secret)));
    const minutes = all.map((m) => m.payload.data.ranges[0].start_time).sort();
    assert.equal(new Set(minutes).size, 30, 'one message per upload');
  });
}
