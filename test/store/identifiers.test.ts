/**
 * The shapes of ids (store/identifiers.ts): every id Stride makes has its kind's shape — else the
 * thing it names could never be found again — and nothing with a control character, a lone
 * surrogate or too many characters has any.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { addTestPeople } from '../../src/domain/test-people.js';
import { hashCredential, newClientId, newCredential } from '../../src/security/secrets.js';
import { newMessageId } from '../../src/store/events.js';
import { newImportId } from '../../src/store/takeout-imports.js';
import { isId, type IdKind } from '../../src/store/identifiers.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { createFixture, createOAuthTestApp, formFields, type Fixture } from '../oauth/flow.js';
import { formPage, signedIn } from '../web/pages-support.js';

cheapPasswordHashing();

const KINDS: IdKind[] = ['client', 'app', 'user', 'webhookEndpoint', 'webhookDelivery', 'session', 'takeoutImport'];

forEachDialect('the shapes of ids', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('fit every id Stride makes, of each kind', async () => {
    const { stores } = t.database;
    const made: Array<[IdKind, string]> = [
      ['client', newClientId()],
      ['client', f.app.clientId],
      ['app', f.app.id],
      ['user', f.user.id],
      ['session', hashCredential(newCredential('session'))],
      ['webhookDelivery', newMessageId()],
    ];
    for (const person of await addTestPeople(stores, f.developer, t.clock(), { days: 1, coalesceSeconds: 0 })) made.push(['user', person.id]);
    const endpoint = (await stores.webhooks.add(f.app.id, 'https://hooks.example.com/a', ['steps.updated'], t.clock(), { atMost: 10 }))!;
    made.push(['webhookEndpoint', endpoint.id]);
    assert.ok(await stores.webhooks.sendTest(endpoint.id, t.clock()));
    made.push(['webhookDelivery', (await stores.webhooks.deliveries(endpoint.id, 1))[0]!.id]);
    // An endpoint added on the dashboard is named by its form.
    const developer = await signedIn(t, f.developer);
    const list = `/dashboard/apps/${f.app.clientId}/webhooks`;
    const added = await developer.post(list, { ...formFields((await formPage(developer, list)).body, list), url: 'https://hooks.example.com/b', events: 'steps.updated' });
    made.push(['webhookEndpoint', decodeURIComponent(added.location().pathname.split('/').at(-1)!)]);
    // A session of the account page.
    made.push(['session', (await stores.sessions.listLive(f.developer.id, t.clock()))[0]!.idHash]);

    made.push(['takeoutImport', newImportId()]);

    for (const [kind, id] of made) assert.ok(isId(kind, id), `${kind} ${id}`);
  });
});

it('fit nothing with a control character, a lone surrogate or too many characters', () => {
  const examples: Record<IdKind, string> = {
    client: '0123456789abcdef0123456789abcdef',
    app: '5b0e6a2c-9a7d-4c1e-8f3b-2d4e6f8a0b1c',
    user: '5b0e6a2c-9a7d-4c1e-8f3b-2d4e6f8a0b1c',
    webhookEndpoint: 'we_AbCdEfGh-_012345',
    webhookDelivery: `msg_${'0'.repeat(32)}`,
    session: 'a'.repeat(64),
    takeoutImport: 'imp_AbCdEfGh-_012345',
  };
  const odd = ['\u0000', '\u0001', '\u001f', '\u007f', '\uD800', '\uDFFF', '\u2028'];
  for (const kind of KINDS) {
    const id = examples[kind];
    assert.ok(isId(kind, id), kind);
    for (const character of odd) {
      for (const changed of [character, id + character, character + id, id.slice(0, 4) + character + id.slice(5)]) {
        assert.equal(isId(kind, changed), false, `${kind} ${JSON.stringify(changed)}`);
      }
    }
    assert.equal(isId(kind, ''), false, `${kind}: empty`);
    assert.equal(isId(kind, id.repeat(300)), false, `${kind}: long`);
  }
});
