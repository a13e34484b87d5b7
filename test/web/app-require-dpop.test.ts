/** The dashboard's "Require DPoP" setting (RFC 9449): set at registration, shown, and changed on the app's page. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createFixture, createOAuthTestApp, type Fixture } from '../oauth/flow.js';
import { signedIn, submit } from './pages-support.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('dashboard: require DPoP', (dialect) => {
  let t: TestApp;
  let f: Fixture;

  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('registers an app that requires DPoP, shows the box ticked, and unticks it', async () => {
    const developer = await signedIn(t, f.developer);
    const posted = await submit(developer, '/dashboard/apps/new', '/dashboard/apps', {
      name: 'Bound Walker', redirect_uris: 'https://bound.example/cb', scopes: ['read_profile'], client_type: 'public', require_dpop: 'yes',
    });
    assert.equal(posted.status, 303, posted.body.slice(0, 400));
    const clientId = posted.location().pathname.split('/')[3]!;
    assert.equal((await t.database.stores.apps.findByClientId(clientId))?.requireDpop, true);

    const page = `/dashboard/apps/${clientId}`;
    const shown = await developer.get(page);
    assert.match(shown.body, /name="require_dpop" value="yes" checked/);
    // Unticked: a checkbox sends nothing.
    const saved = await submit(developer, page, page, { name: 'Bound Walker', redirect_uris: 'https://bound.example/cb', scopes: ['read_profile'] });
    assert.equal(saved.status, 303, saved.body.slice(0, 400));
    assert.equal((await t.database.stores.apps.findByClientId(clientId))?.requireDpop, false);
    const again = await submit(developer, page, page, { name: 'Bound Walker', redirect_uris: 'https://bound.example/cb', scopes: ['read_profile'], require_dpop: 'yes' });
    assert.equal(again.status, 303);
    assert.equal((await t.database.stores.apps.findByClientId(clientId))?.requireDpop, true);
  });
});
