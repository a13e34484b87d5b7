/**
 * docs/webhooks.md, "A receiver that registers itself": the program is taken from the page as
 * written and run with the environment the page sets. A developer following the page word by word
 * gets an endpoint that passes its first verification, then receives signed events; started again,
 * the program takes a new secret for the same endpoint instead of adding another.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/worker.js';
import { createFixture, createOAuthTestApp, obtainTokens, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { freePort } from '../support/cli.js';
import { blockAfter } from '../support/markdown.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

/** The receiver program of docs/webhooks.md, as a reader copies it. */
const receiverProgram = () => blockAfter(readFileSync('docs/webhooks.md', 'utf8'), '## A receiver that registers itself', 'js').code;

interface Running {
  child: ChildProcess;
  output(): string;
  /** Resolves with the output once it matches `pattern`. */
  waitFor(pattern: RegExp): Promise<string>;
}

describe('the webhook receiver of docs/webhooks.md', () => {
  let t: TestApp;
  let fixture: Fixture;
  let worker: DeliveryWorker;
  let receiverUrl: string;
  const running: ChildProcess[] = [];

  before(async () => {
    t = await createOAuthTestApp('sqlite', { WEBHOOK_ALLOW_PRIVATE: 'true' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    fixture = await createFixture(t);
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
    receiverUrl = `http://127.0.0.1:${await freePort()}/stride-hooks`;
  });
  after(async () => {
    for (const child of running) child.kill();
    await worker.stop();
    await t.close();
  });

  function start(): Running {
    const address = t.app.server.address() as { port: number };
    const child = spawn(process.execPath, ['--input-type=module'], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '', STRIDE_URL: `http://127.0.0.1:${address.port}`, CLIENT_ID: fixture.app.clientId, CLIENT_SECRET: fixture.secret, RECEIVER_URL: receiverUrl },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    running.push(child);
    child.stdin!.end(receiverProgram());
    let output = '';
    const waiting: Array<{ pattern: RegExp; resolve(text: string): void }> = [];
    const collect = (chunk: Buffer) => {
      output += chunk;
      for (const wait of waiting.splice(0)) if (wait.pattern.test(output)) wait.resolve(output); else waiting.push(wait);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    return {
      child,
      output: () => output,
      waitFor: (pattern) =>
        new Promise((resolve, reject) => {
          if (pattern.test(output)) return resolve(output);
          waiting.push({ pattern, resolve });
          child.once('exit', (code) => reject(new Error(`the receiver exited (${code}) before printing ${pattern}: ${output}`)));
        }),
    };
  }

  const endpoints = () => t.app.ctx.stores.webhooks.list(fixture.app.id);

  it('passes the first verification, then receives signed events', async () => {
    const receiver = start();
    await receiver.waitFor(/listening for endpoint we_\S+ \(unverified\)/);
    const [endpoint] = await endpoints();
    assert.equal(endpoint!.url, receiverUrl);
    assert.equal(await worker.runOnce(), 1, 'the verification');
    const verified = (await t.app.ctx.stores.webhooks.find(endpoint!.id))!;
    assert.equal(verified.state, 'active', `the first verification passed: ${verified.verify_error}`);
    assert.equal(verified.verify_attempts, 0, 'no failed attempt before it');

    const tokens = await obtainTokens(t, fixture, { scope: 'read_activity write_activity' });
    const upload = await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/activities/steps/',
      headers: { authorization: `Bearer ${tokens.access_token}` },
      payload: { samples: [{ start_time: t.clock() - (t.clock() % 60) - 600, value: 42 }] },
    });
    assert.equal(upload.statusCode, 200, upload.body);
    await worker.runOnce();
    await receiver.waitFor(/^steps\.updated \{.*"user_id"/m);
    receiver.child.kill();
  });

  it('started again, rotates its endpoint\'s secret instead of adding another', async () => {
    const receiver = start();
    const output = await receiver.waitFor(/listening for endpoint we_\S+ \(active\)/);
    assert.equal((await endpoints()).length, 1, output);
    const tokens = await obtainTokens(t, fixture, { scope: 'read_activity write_activity' });
    await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/activities/steps/',
      headers: { authorization: `Bearer ${tokens.access_token}` },
      payload: { samples: [{ start_time: t.clock() - (t.clock() % 60) - 60, value: 7 }] },
    });
    t.clock.advance(60);
    await worker.runOnce();
    await receiver.waitFor(/^steps\.updated /m);
    receiver.child.kill();
  });
});
