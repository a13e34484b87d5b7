/** The cap on an app's webhook endpoints (docs/webhooks.md, "Endpoints") holds under parallel requests. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { createFixture, createOAuthTestApp, type Fixture } from '../oauth/flow.js';
import { MAX_ENDPOINTS_PER_APP } from '../../src/webhooks/endpoints.js';

cheapPasswordHashing();

forEachDialect('the endpoint cap', (dialect) => {
  let t: TestApp;
  let fixture: Fixture;
  let basic: string;
  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'false' });
    fixture = await createFixture(t);
    basic = `Basic ${Buffer.from(`${fixture.app.clientId}:${fixture.secret}`).toString('base64')}`;
  });
  after(() => t.close());

  const add = (n: number) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { authorization: basic, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: `https://hooks.example.com/stride/${n}`, events: ['steps.updated'] }),
    });
  const listed = async () => ((await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: { authorization: basic } })).json() as { data: Array<{ id: string; url: string }> }).data;

  it('leaves exactly 10 endpoints after 100 parallel adds for one app, and refuses the other 90 saying why', async () => {
    assert.equal(MAX_ENDPOINTS_PER_APP, 10);
    const answers = await Promise.all(Array.from({ length: 100 }, (_, n) => add(n)));
    const added = answers.filter((answer) => answer.statusCode === 200).map((answer) => answer.json() as { id: string });
    const refused = answers.filter((answer) => answer.statusCode === 400);
    assert.equal(added.length, 10, `answers: ${answers.map((answer) => answer.statusCode).join(' ')}`);
    assert.equal(refused.length, 90);
    for (const answer of refused) assert.deepEqual(answer.json(), { error: 'invalid_request', error_description: 'an app has at most 10 endpoints' });
    const stored = await listed();
    assert.equal(stored.length, 10);
    assert.deepEqual(stored.map((endpoint) => endpoint.id).sort(), added.map((endpoint) => endpoint.id).sort(), 'the ten stored are the ten answered 200');

    // The cap counts the endpoints there are: one deleted makes room for exactly one.
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${stored[0]!.id}`, headers: { authorization: basic } })).statusCode, 200);
    const again = await Promise.all(Array.from({ length: 20 }, (_, n) => add(100 + n)));
    assert.equal(again.filter((answer) => answer.statusCode === 200).length, 1);
    assert.equal((await listed()).length, 10);
  });
});
