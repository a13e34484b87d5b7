/**
 * Setting an app's Fitbit-compatible subscriber (src/webhooks/fitbit-subscriber.ts): the URL rules
 * of every webhook target, the client secret checked and kept sealed, a new URL or code verified
 * again, the subscriber kept apart from the app's standard endpoints — and the connection rules of
 * targets.ts on its verification too.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { unsealClientSecret } from '../../src/domain/sealed-client-secrets.js';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import { setSubscriber, SubscriberInputError } from '../../src/webhooks/fitbit-subscriber.js';
import { isPublicAddress } from '../../src/webhooks/public-address.js';
import { createDeliveryWorker } from '../../src/webhooks/worker.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { missing } from '../support/dependencies.js';
import { confidentialApp, startFitbitSubscriber } from '../support/fitbit-subscriber.js';
import { createUser } from '../support/tokens.js';

forEachDialect('Fitbit-compatible subscribers', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'false' });
  });
  after(() => t.close());

  const refusal = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (error) {
      if (error instanceof SubscriberInputError) return { field: error.field, message: error.message };
      throw error;
    }
    assert.fail('accepted');
  };

  it('refuses plain http and private addresses as every webhook target, a wrong client secret, and a public app', async () => {
    const { app, clientSecret } = await confidentialApp(t, await createUser(t));
    for (const url of ['http://hooks.example.com/fitbit', 'https://127.0.0.1/fitbit', 'https://169.254.169.254/latest', 'https://localhost/fitbit']) {
      const refused = await refusal(() => setSubscriber(t.app.ctx, app, { url, clientSecret }));
      assert.equal(refused.field, 'url', url);
      assert.match(refused.message, /WEBHOOK_ALLOW_PRIVATE/);
    }
    assert.equal((await refusal(() => setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.com/fitbit' }))).field, 'client_secret', 'a new subscriber needs the secret');
    assert.equal((await refusal(() => setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.com/fitbit', clientSecret: `${clientSecret}x` }))).field, 'client_secret');
    assert.equal((await refusal(() => setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.com/fitbit', clientSecret, verificationCode: 'short' }))).field, 'verification_code');
    assert.equal((await refusal(() => setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.com/fitbit', clientSecret, subscriberId: 'a b' }))).field, 'subscriber_id');
    const owner = await createUser(t);
    const { app: publicApp } = await registerApp(t.database.stores.apps, t.clock, owner.id, { name: 'Public', redirectUris: ['https://p.example.test/cb'], scopes: ['read_activity'], isPublic: true });
    assert.match((await refusal(() => setSubscriber(t.app.ctx, publicApp, { url: 'https://hooks.example.com/fitbit' }))).message, /confidential/);
    assert.equal(await t.app.ctx.stores.fitbitSubscriptions.subscriber(app.id), undefined, 'nothing was set');
  });

  it('keeps the client secret sealed to its app, verifies again after a new URL or code, and stays apart from the standard endpoints', async () => {
    const { app, clientSecret } = await confidentialApp(t, await createUser(t));
    const set = await setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.com/fitbit', clientSecret });
    assert.deepEqual([set.state, set.fitbit_subscriber_id, set.format], ['unverified', '1', 'fitbit']);
    assert.match(String(set.fitbit_verification_code), /^[0-9a-f]{64}$/, 'a code made by Stride, as long as Fitbit\'s');
    assert.equal(set.challenge, set.fitbit_verification_code);
    assert.ok(!set.secret.includes(clientSecret) && !set.secret.includes(clientSecret.slice(4)), 'never kept in clear');
    assert.equal(await unsealClientSecret(t.app.ctx.stores, t.clock, app.id, set.secret), clientSecret);
    const { app: other } = await confidentialApp(t, await createUser(t));
    assert.equal(await unsealClientSecret(t.app.ctx.stores, t.clock, other.id, set.secret), null, 'bound to its app: copied to another, it opens nothing');

    // Verified, then a new subscriber id alone changes nothing of that; a new URL or code does.
    await t.database.db.kysely.updateTable('webhook_endpoints').set({ state: 'active', challenge: null }).where('id', '=', set.id).execute();
    const renamed = await setSubscriber(t.app.ctx, app, { url: set.url, subscriberId: 'mover-1' });
    assert.deepEqual([renamed.state, renamed.fitbit_subscriber_id, renamed.secret], ['active', 'mover-1', set.secret]);
    const moved = await setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.com/fitbit-2' });
    assert.deepEqual([moved.state, moved.challenge, moved.fitbit_verification_code], ['unverified', set.fitbit_verification_code, set.fitbit_verification_code], 'the same code, verified again at the new URL');
    const recoded = await setSubscriber(t.app.ctx, app, { url: moved.url, verificationCode: 'from-fitbit-0123456789' });
    assert.deepEqual([recoded.challenge, recoded.fitbit_verification_code], ['from-fitbit-0123456789', 'from-fitbit-0123456789']);

    const endpoint = await addEndpoint(t.app.ctx.stores.webhooks, t.config, app.id, { url: 'https://hooks.example.com/standard', events: 'steps.updated' }, t.clock());
    assert.deepEqual((await t.app.ctx.stores.webhooks.list(app.id)).map((row) => row.id), [endpoint.id], 'the subscriber is not one of the endpoints');
    assert.equal(await t.app.ctx.stores.webhooks.find(set.id), undefined);
    assert.equal(await t.app.ctx.stores.webhooks.delete(set.id), false, 'nor deleted as one');
    assert.deepEqual((await t.app.ctx.stores.webhooks.summaries([app.id])).get(app.id), { endpoints: 1, failing: 0 });
    assert.equal(await t.app.ctx.stores.fitbitSubscriptions.removeSubscriber(app.id), true);
    assert.equal(await t.app.ctx.stores.fitbitSubscriptions.subscriber(app.id), undefined);
  });

  it('verifies through the connection rules of every target: a subscriber at a private address gets no request', async (test) => {
    const subscriber = await startFitbitSubscriber('0123456789abcdef', 'correct');
    const worker = createDeliveryWorker(t.app.ctx, t.app.log);
    try {
      // Set while private addresses were allowed; this server no longer allows them.
      const { app, clientSecret } = await confidentialApp(t, await createUser(t));
      const allowing = { ...t.app.ctx, config: { ...t.config, webhooks: { ...t.config.webhooks, allowPrivate: true } } };
      await setSubscriber(allowing, app, { url: subscriber.url, verificationCode: '0123456789abcdef', clientSecret });
      await worker.runOnce();
      const refused = (await t.app.ctx.stores.fitbitSubscriptions.subscriber(app.id))!;
      assert.equal(refused.state, 'unverified');
      assert.match(String(refused.verify_error), /https:\/\//);

      // A name that passes the URL check and leads to this machine is refused where it resolves.
      const addresses = await lookup(hostname(), { all: true });
      if (addresses.every((entry) => isPublicAddress(entry.address))) {
        test.skip(missing(`${hostname()} resolves only to public addresses: no name here passes the URL check and leads to this machine`) ?? undefined);
        return;
      }
      const { app: named, clientSecret: namedSecret } = await confidentialApp(t, await createUser(t));
      await setSubscriber(t.app.ctx, named, { url: `https://${hostname()}:${new URL(subscriber.url).port}/fitbit`, verificationCode: '0123456789abcdef', clientSecret: namedSecret });
      await worker.runOnce();
      assert.match(String((await t.app.ctx.stores.fitbitSubscriptions.subscriber(named.id))!.verify_error), /not a public address/);
      assert.deepEqual(subscriber.verifications, []);
    } finally {
      await worker.stop();
      await subscriber.close();
    }
  });
});
