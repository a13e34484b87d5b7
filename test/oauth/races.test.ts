/**
 * Races on the authorization server's single-use and revocation rules (RFC 6749 §4.1.2, §10.5;
 * RFC 9700 §4.14.2; RFC 7009 §2.1): requests fired together with Promise.all, so on PostgreSQL they
 * run on several pool connections at once and on SQLite they interleave on the event loop. Each
 * invariant is checked afterwards on every token any racing request was given, and on the rows.
 *
 * Related races tested elsewhere: five concurrent code exchanges (oauth/token.test.ts), ten
 * concurrent refreshes of one token (oauth/refresh.test.ts), two processes rotating the same
 * refresh tokens (store/token-rotation.test.ts), a registration form sent twice
 * (web/dashboard.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp, updateAppSettings } from '../../src/domain/apps.js';
import { parseScopeString } from '../../src/domain/scopes.js';
import { tokenKey } from '../../src/security/secrets.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import {
  authorizeUrl,
  Browser,
  checkboxScopes,
  createFixture,
  createOAuthTestApp,
  exchangeCode,
  formFields,
  obtainCode,
  obtainTokens,
  REDIRECT_URI,
  refresh,
  signIn,
  tokenRequest,
  useToken,
  type Fixture,
  type Tokens,
} from './flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

const PARALLEL = 20;

/** Lets `hops` turns of the event loop pass, to vary where one racer lands between the others' statements. */
async function turns(hops: number): Promise<void> {
  for (let i = 0; i < hops; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Every token a set of racing requests was given, to be checked once the race is over. */
class Issued {
  readonly access = new Set<string>();
  readonly refresh = new Set<string>();
  add(tokens: Tokens): void {
    this.access.add(tokens.access_token);
    this.refresh.add(tokens.refresh_token);
  }
}

forEachDialect('races on codes, refresh tokens, revocation, scope changes and consent', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { REFRESH_REPLAY_WINDOW: '30' });
    f = await createFixture(t);
  });
  after(() => t.close());

  const db = () => t.database.db.kysely;

  /** No issued token works any more: access tokens 401, refresh tokens invalid_grant, and no row of either is left. */
  async function assertAllDead(issued: Issued, why: string): Promise<void> {
    for (const token of issued.access) assert.equal(await useToken(t, token), 401, `${why}: an access token still works`);
    for (const token of issued.refresh) {
      const response = await refresh(t, f, token);
      assert.equal(response.statusCode, 400, `${why}: a refresh token still works: ${response.body}`);
      assert.equal(response.json().error, 'invalid_grant');
    }
    const keys = { access: [...issued.access].map(tokenKey), refresh: [...issued.refresh].map(tokenKey) };
    const accessRows = await db().selectFrom('access_tokens').select('token_key').where('token_key', 'in', keys.access).execute();
    const refreshRows = await db().selectFrom('refresh_tokens').select('token_key').where('token_key', 'in', keys.refresh).execute();
    assert.deepEqual([accessRows.length, refreshRows.length], [0, 0], `${why}: token rows left`);
  }

  /**
   * A client refreshing its chain as fast as it can, from `start`, until a refresh is refused (or
   * `max` refreshes). Every answered token goes into `issued`.
   */
  async function refreshChain(start: string, issued: Issued, max = 50): Promise<void> {
    let current = start;
    for (let i = 0; i < max; i++) {
      const response = await refresh(t, f, current);
      if (response.statusCode !== 200) {
        assert.equal(response.json().error, 'invalid_grant', response.body);
        return;
      }
      const tokens = response.json() as Tokens;
      issued.add(tokens);
      current = tokens.refresh_token;
    }
  }

  it(`${PARALLEL} concurrent exchanges of one code: exactly one succeeds, and its tokens end, even when refreshed at once`, async () => {
    for (let trial = 0; trial < 3; trial++) {
      const { code } = await obtainCode(t, f);
      const issued = new Issued();
      const chains: Promise<void>[] = [];
      const responses = await Promise.all(
        Array.from({ length: PARALLEL }, () =>
          exchangeCode(t, f, code).then((response) => {
            // The winner goes on refreshing while the replays are being refused.
            if (response.statusCode === 200) {
              const tokens = response.json() as Tokens;
              issued.add(tokens);
              chains.push(refreshChain(tokens.refresh_token, issued));
            }
            return response;
          }),
        ),
      );
      await Promise.all(chains);
      const won = responses.filter((r) => r.statusCode === 200);
      assert.equal(won.length, 1, `trial ${trial}: ${won.length} exchanges succeeded`);
      for (const r of responses.filter((r) => r.statusCode !== 200)) {
        assert.equal(r.statusCode, 400, r.body);
        assert.equal(r.json().error, 'invalid_grant');
      }
      // RFC 6749 §4.1.2: the replays revoke everything issued from the code, later refreshes included.
      await assertAllDead(issued, `trial ${trial}`);
    }
  });

  it(`${PARALLEL} concurrent refreshes of one token, round after round: one successor each time, one live chain`, async () => {
    const tokens = await obtainTokens(t, f);
    const familyId = (await db().selectFrom('refresh_tokens').select('family_id').where('token_key', '=', tokenKey(tokens.refresh_token)).executeTakeFirstOrThrow()).family_id;
    let current = tokens.refresh_token;
    const accessTokens = [tokens.access_token];
    for (let round = 0; round < 4; round++) {
      const responses = await Promise.all(Array.from({ length: PARALLEL }, () => refresh(t, f, current)));
      for (const r of responses) assert.equal(r.statusCode, 200, r.body);
      const bodies = responses.map((r) => r.json() as Tokens);
      // Within the replay window every duplicate gets the winner's answer (docs/oauth.md).
      assert.equal(new Set(bodies.map((b) => b.refresh_token)).size, 1, `round ${round}: several successors`);
      assert.equal(new Set(bodies.map((b) => b.access_token)).size, 1, `round ${round}: several access tokens`);
      assert.notEqual(bodies[0]!.refresh_token, current);
      current = bodies[0]!.refresh_token;
      accessTokens.push(bodies[0]!.access_token);
      const live = await db().selectFrom('refresh_tokens').select('token_key').where('family_id', '=', familyId).where('rotated_at', 'is', null).execute();
      assert.deepEqual(live.map((row) => row.token_key), [tokenKey(current)], `round ${round}: the live refresh tokens of the chain`);
      const accessRows = await db().selectFrom('access_tokens').select('token_key').where('family_id', '=', familyId).execute();
      assert.equal(accessRows.length, round + 2, `round ${round}: one access token per rotation`);
    }
    for (const token of accessTokens) assert.equal(await useToken(t, token), 200);
  });

  /**
   * Several tabs of one client refresh the chain (each from the latest token it has seen) while
   * `revoke` runs after `delay` turns. Once revoke has answered and the tabs have stopped, no token
   * any of them was given works.
   */
  async function raceRevocation(start: Tokens, delay: number, revoke: (tokens: Tokens) => Promise<void>): Promise<Issued> {
    const issued = new Issued();
    issued.add(start);
    let latest = start.refresh_token;
    const tab = async () => {
      for (let i = 0; i < 30; i++) {
        const response = await refresh(t, f, latest);
        if (response.statusCode !== 200) {
          // Refused as a client error, never a server error (a deadlock with the revocation, say).
          assert.equal(response.statusCode, 400, response.body);
          assert.equal(response.json().error, 'invalid_grant');
          return;
        }
        const tokens = response.json() as Tokens;
        issued.add(tokens);
        latest = tokens.refresh_token;
      }
    };
    const tabs = Promise.all([tab(), tab(), tab(), tab()]);
    await turns(delay);
    await revoke(start);
    await tabs;
    return issued;
  }

  it('an RFC 7009 revocation of a refresh token racing refreshes of its chain: once answered, no token of the chain works', async () => {
    const basic = () => `Basic ${Buffer.from(`${f.app.clientId}:${f.secret}`).toString('base64')}`;
    let raced = 0;
    for (let trial = 0; trial < 8; trial++) {
      const issued = await raceRevocation(await obtainTokens(t, f), trial * 3, async (tokens) => {
        const response = await t.app.inject({
          method: 'POST',
          url: '/oauth2/revoke',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic() },
          payload: new URLSearchParams({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }).toString(),
        });
        assert.equal(response.statusCode, 200, response.body);
      });
      if (issued.refresh.size > 1) raced++;
      await assertAllDead(issued, `trial ${trial}`);
    }
    assert.ok(raced > 0, 'in no trial did a refresh succeed before the revocation: nothing raced it');
  });

  it('the user revoking the app on the account page racing refreshes: once answered, no token of the grant works', async () => {
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    let raced = 0;
    for (let trial = 0; trial < 6; trial++) {
      // Two chains of the grant: the revocation ends both.
      const other = await obtainTokens(t, f);
      const issued = await raceRevocation(await obtainTokens(t, f), trial * 3, async () => {
        const page = await browser.get('/account');
        const response = await browser.post(`/account/connected-apps/${f.app.id}/revoke`, formFields(page.body, `/account/connected-apps/${f.app.id}/revoke`));
        assert.equal(response.status, 303, response.body);
      });
      if (issued.refresh.size > 1) raced++;
      issued.add(other);
      await assertAllDead(issued, `trial ${trial}`);
      const grant = await db().selectFrom('grants').select('id').where('user_id', '=', f.user.id).where('app_id', '=', f.app.id).executeTakeFirst();
      assert.equal(grant, undefined);
    }
    assert.ok(raced > 0, 'in no trial did a refresh succeed before the revocation: nothing raced it');
  });

  it('deleting the app racing refreshes of its tokens: once deleted, no token works', async () => {
    let raced = 0;
    for (let trial = 0; trial < 5; trial++) {
      const { app, clientSecret } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: `Doomed ${trial}`, redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false });
      const client: Fixture = { ...f, app, secret: clientSecret! };
      const browser = new Browser(t.app);
      assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
      const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI }));
      const decision = await browser.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: checkboxScopes(page.body), decision: 'allow' });
      const start = (await exchangeCode(t, client, decision.location().searchParams.get('code')!)).json() as Tokens;
      const issued = new Issued();
      issued.add(start);
      let latest = start.refresh_token;
      const tab = async () => {
        for (let i = 0; i < 30; i++) {
          const response = await refresh(t, client, latest);
          if (response.statusCode !== 200) {
            // The client is gone: invalid_client, or invalid_grant if it was read just before.
            assert.equal(response.statusCode === 401 ? 'invalid_client' : 'invalid_grant', response.json().error, response.body);
            return;
          }
          const tokens = response.json() as Tokens;
          issued.add(tokens);
          latest = tokens.refresh_token;
        }
      };
      const tabs = Promise.all([tab(), tab(), tab()]);
      await turns(trial * 3);
      // The last trials wait for a first rotation (on a busy machine PostgreSQL's round trips take
      // many turns), so that a deletion meets refreshes already under way.
      for (let i = 0; trial >= 3 && i < 5_000 && issued.refresh.size < 2; i++) await turns(1);
      await t.database.stores.apps.delete(app.id);
      await tabs;
      if (issued.refresh.size > 1) raced++;
      for (const token of issued.access) assert.equal(await useToken(t, token), 401, `trial ${trial}: an access token of the deleted app works`);
      const rows = await db().selectFrom('refresh_tokens').select('token_key').where('app_id', '=', app.id).execute();
      const accessRows = await db().selectFrom('access_tokens').select('token_key').where('app_id', '=', app.id).execute();
      assert.deepEqual([rows.length, accessRows.length], [0, 0], `trial ${trial}: token rows of the deleted app`);
    }
    assert.ok(raced > 0, 'in no trial did a refresh succeed before the deletion: nothing raced it');
  });

  it("a developer's scope change racing refreshes: no token with the old scope set survives; grants with the new set keep theirs", async () => {
    let raced = 0;
    for (let trial = 0; trial < 5; trial++) {
      const wide = ['read_profile', 'read_activity', 'write_activity'];
      const { app, clientSecret } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: `Scoped ${trial}`, redirectUris: [REDIRECT_URI], scopes: wide, isPublic: false });
      const client: Fixture = { ...f, app, secret: clientSecret! };
      const oldScope = await obtainTokensFor(client, wide.join(' '));
      // A grant that already has exactly the new set keeps its tokens (docs/oauth.md).
      const narrow = await obtainTokensFor(client, 'read_profile read_activity', f.developer.email);

      const issued = new Issued();
      issued.add(oldScope);
      let latest = oldScope.refresh_token;
      const tab = async () => {
        for (let i = 0; i < 30; i++) {
          const response = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: latest, client_id: app.clientId, client_secret: clientSecret! });
          if (response.statusCode !== 200) {
            assert.equal(response.json().error, 'invalid_grant', response.body);
            return;
          }
          const tokens = response.json() as Tokens;
          assert.equal(tokens.scope, 'read_profile read_activity write_activity');
          issued.add(tokens);
          latest = tokens.refresh_token;
        }
      };
      const tabs = Promise.all([tab(), tab(), tab()]);
      await turns(trial * 3);
      const { grantsRevoked } = await updateAppSettings(t.database.stores.apps, t.clock, app, { scopes: ['read_profile', 'read_activity'] });
      assert.equal(grantsRevoked, 1);
      await tabs;
      if (issued.refresh.size > 1) raced++;

      for (const token of issued.access) assert.equal(await useToken(t, token), 401, `trial ${trial}: an access token with the old scopes works`);
      for (const token of issued.refresh) {
        const response = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: app.clientId, client_secret: clientSecret! });
        assert.equal(response.statusCode, 400, `trial ${trial}: a refresh token with the old scopes works: ${response.body}`);
      }
      const survivors = await db().selectFrom('refresh_tokens').select('scope').where('app_id', '=', app.id).execute();
      const survivingAccess = await db().selectFrom('access_tokens').select('scope').where('app_id', '=', app.id).execute();
      for (const row of [...survivors, ...survivingAccess]) assert.equal(row.scope, 'read_profile read_activity', `trial ${trial}: a token row with the old scopes`);
      assert.equal(await useToken(t, narrow.access_token), 200, 'the grant with the new set keeps working');
    }
    assert.ok(raced > 0, 'in no trial did a refresh succeed before the scope change: nothing raced it');

    /** Consent (signed in as `email`) for exactly `scope`, then the code exchange. */
    async function obtainTokensFor(client: Fixture, scope: string, email = f.user.email): Promise<Tokens> {
      const browser = new Browser(t.app);
      assert.equal((await signIn(browser, email, f.password)).status, 303);
      const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: client.app.clientId, redirect_uri: REDIRECT_URI, scope, prompt: 'consent' }));
      const decision = await browser.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: checkboxScopes(page.body), decision: 'allow' });
      const code = decision.location().searchParams.get('code')!;
      const response = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: client.app.clientId, client_secret: client.secret });
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as Tokens;
    }
  });

  it("a consent racing a developer's scope change: no grant, code or token with the old scope set survives", async () => {
    const browser = new Browser(t.app);
    assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
    // Which way each trial went: the consent decided before the change (a code) or after (refused).
    const reached = new Set<'code' | 'refused'>();
    // Trial 0 sends the consent and then saves the change, trial 1 the other way round, so that both
    // orders are checked whoever tends to win the race; the others race, landing at different turns.
    for (let trial = 0; trial < 8; trial++) {
      const wide = ['read_profile', 'read_activity', 'write_activity'];
      const { app, clientSecret } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: `Narrowed ${trial}`, redirectUris: [REDIRECT_URI], scopes: wide, isPublic: false });
      // The consent page was shown before the change; the person allows while the developer saves.
      const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI, state: 's' }));
      assert.equal(page.status, 200);
      const form = { ...formFields(page.body, '/oauth2/authorize'), granted_scope: checkboxScopes(page.body), decision: 'allow' };
      const consent = () => browser.post('/oauth2/authorize', form);
      const change = () => updateAppSettings(t.database.stores.apps, t.clock, app, { scopes: ['read_profile', 'read_activity'] });
      let decision: Awaited<ReturnType<typeof consent>>;
      if (trial === 0) {
        decision = await consent();
        await change();
      } else if (trial === 1) {
        await change();
        decision = await consent();
      } else {
        const race = trial - 2;
        [decision] = await Promise.all([turns(race % 3).then(consent), turns(Math.floor(race / 3)).then(change)]);
      }
      const grants = await db().selectFrom('grants').select('scope').where('app_id', '=', app.id).execute();
      for (const grant of grants) assert.ok(!grant.scope.includes('write_activity'), `trial ${trial}: a grant with the old scopes: ${grant.scope}`);
      if (decision.status === 400) {
        // Checked after the change, before the consent's transaction: an app nobody has granted
        // gets the error page, not a redirect (docs/oauth.md), and nothing was granted.
        assert.match(decision.body, /invalid_scope/);
        assert.equal(grants.length, 0);
        reached.add('refused');
        continue;
      }
      assert.equal(decision.status, 303, decision.body.slice(0, 300));
      const code = decision.location().searchParams.get('code');
      if (code === null) {
        // Decided after the change: the request asked for a scope the app no longer has.
        assert.equal(decision.location().searchParams.get('error'), 'invalid_scope');
        reached.add('refused');
        continue;
      }
      reached.add('code');
      const response = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: app.clientId, client_secret: clientSecret! });
      if (response.statusCode === 200) assert.ok(!response.json().scope.includes('write_activity'), `trial ${trial}: a token with the old scopes: ${response.body}`);
      else assert.equal(response.json().error, 'invalid_grant', response.body);
    }
    assert.deepEqual([...reached].sort(), ['code', 'refused'], 'both orders were checked');
  });

  it('a consent form sent twice at once makes one grant, and every code it returned carries only granted scopes', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const { app, clientSecret } = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
        name: `Twice ${trial}`,
        redirectUris: [REDIRECT_URI],
        scopes: ['read_profile', 'read_activity', 'write_activity'],
        isPublic: false,
      });
      const browser = new Browser(t.app);
      assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
      const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT_URI, state: 's' }));
      assert.equal(page.status, 200);
      const form = { ...formFields(page.body, '/oauth2/authorize'), decision: 'allow' };
      // A double click, and a second tab where the user unticked write_activity.
      const all = checkboxScopes(page.body);
      const forms = [all, all, all.filter((s) => s !== 'write_activity')];
      const decisions = await Promise.all(forms.map((ticked) => browser.post('/oauth2/authorize', { ...form, granted_scope: ticked })));
      const grants = await db().selectFrom('grants').select(['id', 'scope']).where('user_id', '=', f.user.id).where('app_id', '=', app.id).execute();
      assert.equal(grants.length, 1, `trial ${trial}: ${grants.length} grants`);
      const granted = new Set(parseScopeString(grants[0]!.scope));
      for (const decision of decisions) {
        assert.equal(decision.status, 303, decision.body.slice(0, 300));
        const code = decision.location().searchParams.get('code');
        assert.ok(code);
        const response = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: app.clientId, client_secret: clientSecret! });
        // A code the last decision withdrew a scope from is gone; any code that works is within the grant.
        if (response.statusCode === 200) {
          const tokens = response.json() as Tokens;
          for (const scope of parseScopeString(tokens.scope)) assert.ok(granted.has(scope), `trial ${trial}: a token carries ${scope}, not granted (${grants[0]!.scope})`);
        } else {
          assert.equal(response.json().error, 'invalid_grant', response.body);
        }
      }
      const codes = await db().selectFrom('authorization_codes').select(['grant_id', 'scope']).where('app_id', '=', app.id).where('user_id', '=', f.user.id).execute();
      for (const code of codes) assert.equal(code.grant_id, grants[0]!.id);
    }
  });
});
