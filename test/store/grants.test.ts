/**
 * The grant store (store/grants.ts): one grant per user and app, whose id survives every later
 * consent, so the codes and tokens issued under it stay attached to it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { findGrant, upsertGrant } from '../../src/store/grants.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser, type TestUser } from '../support/tokens.js';

forEachDialect('grant store', (dialect) => {
  let t: TestApp;
  let user: TestUser;

  before(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t);
  });
  after(() => t.close());

  it('upsertGrant creates the grant once, then changes its scope and keeps its id', async () => {
    const db = t.database.db.kysely;
    const { app } = await registerApp(db, t.clock, user.id, {
      name: 'Grant Test',
      redirectUris: ['https://app.example.test/callback'],
      scopes: ['read_profile', 'read_activity'],
      isPublic: false,
    });
    const created = t.clock();
    const firstId = randomUUID();
    assert.equal(await upsertGrant(db, { id: firstId, userId: user.id, appId: app.id, scope: 'read_profile' }, created), firstId);

    t.clock.advance(30);
    const again = await upsertGrant(db, { id: randomUUID(), userId: user.id, appId: app.id, scope: 'read_activity read_profile' }, t.clock());
    assert.equal(again, firstId, 'the existing grant answers, not the id proposed for a new one');

    const stored = await findGrant(db, user.id, app.id);
    assert.ok(stored);
    assert.equal(stored.id, firstId);
    assert.equal(stored.scope, 'read_activity read_profile');
    assert.equal(Number(stored.created_at), created);
    assert.equal(Number(stored.updated_at), created + 30);
    const count = await db.selectFrom('grants').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', app.id).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });
});
