/**
 * Crash consistency: a real `stride serve` is killed with SIGKILL in the middle of mixed load —
 * refresh chains, step uploads, consents, RFC 7009 and account-page revocations — and restarted
 * on the same database. Whatever a client was told (an answered request) must hold after the
 * restart; what was in flight at the kill may have happened or not, but wholly or not at all.
 *
 * The replay window stays at its default (30 s): a refresh in flight at the kill may have
 * committed without its answer reaching the client, which is the lost response the window exists
 * for (docs/oauth.md). So the last refresh token a client received must work once more after the
 * restart — rotating, or replaying the rotation it never heard of — and no token of a chain may
 * yield a second successor.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { it } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import { newTokenPair, tokenKey } from '../../src/security/secrets.js';
import { insertTokenPair } from '../../src/store/tokens.js';
import type { User } from '../../src/store/users.js';
import { insertGrant } from '../support/tokens.js';
import { Browser, signIn, type Tokens } from '../oauth/flow.js';
import { freePort, startServer } from '../support/cli.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';
import { storedStepDays, storedStepMinutes } from '../support/series-days.js';
import {
  authorizationCode,
  consent,
  exchange,
  exchangeForTokens,
  expectStatus,
  MINUTES_PER_BATCH,
  profileStatus,
  refreshWith,
  revokeOnAccountPage,
  sampleValue,
  send,
  untilKilled,
  type Client,
  type LoadLog,
} from './mixed-load.js';

const PASSWORD = 'correct horse battery';
const REDIRECT_URI = 'https://client.example/callback';
const CHAINS = 4;
const UPLOADERS = 2;
/** Days each uploader cycles over: later batches replace earlier ones' minutes. */
const UPLOAD_DAYS = 3;
const clock = () => Math.floor(Date.now() / 1000);

interface Chain {
  /** Every refresh token the client received, oldest first: the code exchange's, then each refresh's. */
  refreshTokens: string[];
  accessTokens: string[];
}

interface Uploader {
  user: User;
  token: string;
  firstDay: number;
  /** The last answered batch per day. */
  answered: Map<number, number>;
  /** The batch whose answer never came. */
  inFlight: number | null;
}

interface Revocation {
  tokens: Tokens;
  kind: 'refresh_token' | 'access_token' | 'account';
}

async function signedInBrowser(base: string, user: User): Promise<Browser> {
  const browser = new Browser(null, base);
  const response = await signIn(browser, user.email, PASSWORD);
  assert.equal(response.status, 303, response.body.slice(0, 200));
  return browser;
}

function stop(server: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.once('exit', () => resolve());
    server.kill(signal);
  });
}

forEachDialect('crash consistency: SIGKILL under mixed load, then restart', (dialect) => {
  it('keeps every answered write, wholly, and nothing half-written', { timeout: 60_000 }, async () => {
    const database = await createTestDatabase(dialect);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: database.url, PUBLIC_URL: base, RATE_LIMIT: 'off', REFRESH_REPLAY_WINDOW: '30', LOG_LEVEL: 'error' };
    let server = await startServer(port, env);
    try {
      await crashAndCheck(database, base, async () => {
        await stop(server, 'SIGKILL');
      }, async () => {
        server = await startServer(port, env);
      });
    } finally {
      await stop(server, 'SIGTERM');
      await database.drop();
    }
  });
});

async function crashAndCheck(database: TestDatabase, base: string, kill: () => Promise<void>, restart: () => Promise<void>): Promise<void> {
  const db = database.db.kysely;
  const now = clock();
  // One password hash for every account (the hash carries its salt): Argon2id is slow on purpose.
  const developer = await createAccount(database.stores.users, clock, { email: `developer-${randomBytes(4).toString('hex')}@example.com`, password: PASSWORD, displayName: 'Developer' });
  const account = async (name: string): Promise<User> => {
    const user = { ...developer, id: randomUUID(), email: `${name}-${randomBytes(4).toString('hex')}@example.com`, display_name: name };
    await database.stores.users.insert(user);
    return user;
  };
  const scope = 'read_profile write_profile read_activity write_activity';
  const registered = await registerApp(database.stores.apps, clock, developer.id, { name: 'Crash Coach', redirectUris: [REDIRECT_URI], scopes: scope.split(' '), isPublic: false });
  const client: Client = { base, clientId: registered.app.clientId, secret: registered.clientSecret!, redirectUri: REDIRECT_URI };
  const [walker, consenter, revoker, leaver] = await Promise.all(['walker', 'consenter', 'revoker', 'leaver'].map(account));
  const [walkerBrowser, consenterBrowser, revokerBrowser, leaverBrowser] = await Promise.all([walker, consenter, revoker, leaver].map((user) => signedInBrowser(base, user!)));

  /** An access token for a new user, made through the store (uploaders need no pages). */
  const uploaderWithToken = async (i: number): Promise<{ user: User; token: string }> => {
    const user = await account(`uploader${i}`);
    const grantId = await insertGrant(db, { userId: user.id, appId: registered.app.id, scope }, now);
    const { accessToken, refreshToken } = newTokenPair();
    const row = { family_id: randomUUID(), grant_id: grantId, app_id: registered.app.id, user_id: user.id, scope, expires_at: now + 3600, created_at: now, jkt: null };
    await insertTokenPair(db, { ...row, token_key: tokenKey(accessToken) }, { ...row, token_key: tokenKey(refreshToken), requested_scope: null });
    return { user, token: accessToken };
  };

  // Each chain is a family of its own (one code each) under the walker's one grant.
  const chains: Chain[] = [];
  for (let i = 0; i < CHAINS; i++) {
    const tokens = await exchangeForTokens(client, await authorizationCode(walkerBrowser!, client));
    chains.push({ refreshTokens: [tokens.refresh_token], accessTokens: [tokens.access_token] });
  }
  const today = clock() - (clock() % 86400);
  const uploaders: Uploader[] = [];
  for (let i = 0; i < UPLOADERS; i++) {
    const { user, token } = await uploaderWithToken(i);
    uploaders.push({ user, token, firstDay: today - (i + 1) * UPLOAD_DAYS * 86400, answered: new Map(), inFlight: null });
  }

  const log: LoadLog = { unexpected: [], brokenAt: [] };
  let batches = 0;
  // The consenter: consent, then exchange the code.
  const consents = { exchanged: [] as Tokens[], kept: [] as string[], exchangeInFlight: null as string | null };
  // The revoker: tokens, then an RFC 7009 revocation of the refresh token or of the access token.
  const revocations = { answered: [] as Revocation[], inFlight: new Map<string, Revocation>(), cycles: 0 };
  // The leaver: consent, tokens, then "remove app" on the account page.
  const leaving = { grantMayExist: true };
  let cycle = 0;

  const loops = [
    ...chains.map((chain, i) =>
      untilKilled(log, `chain ${i}`, async () => {
        const answer = await refreshWith(client, chain.refreshTokens.at(-1)!);
        expectStatus(answer, 200, 'refresh');
        const tokens = answer.json() as Tokens;
        chain.refreshTokens.push(tokens.refresh_token);
        chain.accessTokens.push(tokens.access_token);
      }),
    ),
    ...uploaders.map((uploader, i) =>
      untilKilled(log, `uploader ${i}`, async () => {
        const batch = batches++;
        const day = uploader.firstDay + (batch % UPLOAD_DAYS) * 86400;
        const samples = Array.from({ length: MINUTES_PER_BATCH }, (_, minute) => ({ start_time: day + minute * 60, value: sampleValue(batch, minute) }));
        uploader.inFlight = batch;
        const answer = await send(base, 'POST', '/v1/users/me/activities/steps', { json: { samples }, headers: { authorization: `Bearer ${uploader.token}` } });
        expectStatus(answer, 200, 'upload');
        uploader.answered.set(day, batch);
        uploader.inFlight = null;
      }),
    ),
    untilKilled(log, 'consenter', async () => {
      const code = await consent(consenterBrowser!, client, `c${cycle++}`);
      // Every other code is kept for later, as an app that exchanges it after a while would.
      if (consents.kept.length <= consents.exchanged.length) {
        consents.kept.push(code);
        return;
      }
      consents.exchangeInFlight = code;
      const answer = await exchange(client, code);
      expectStatus(answer, 200, 'code exchange');
      consents.exchangeInFlight = null;
      consents.exchanged.push(answer.json() as Tokens);
    }),
    untilKilled(log, 'revoker', async () => {
      const tokens = await exchangeForTokens(client, await authorizationCode(revokerBrowser!, client));
      const kind = revocations.cycles++ % 2 === 0 ? 'refresh_token' : 'access_token';
      revocations.inFlight.set('revoker', { tokens, kind });
      const answer = await send(base, 'POST', '/oauth2/revoke', {
        form: { token: kind === 'refresh_token' ? tokens.refresh_token : tokens.access_token, client_id: client.clientId, client_secret: client.secret },
      });
      expectStatus(answer, 200, 'revocation');
      revocations.inFlight.delete('revoker');
      revocations.answered.push({ tokens, kind });
    }),
    untilKilled(log, 'leaver', async () => {
      const code = await consent(leaverBrowser!, client, `l${cycle++}`, () => (leaving.grantMayExist = true));
      const tokens = await exchangeForTokens(client, code);
      revocations.inFlight.set('leaver', { tokens, kind: 'account' });
      await revokeOnAccountPage(leaverBrowser!, registered.app.id);
      revocations.inFlight.delete('leaver');
      leaving.grantMayExist = false;
      revocations.answered.push({ tokens, kind: 'account' });
    }),
  ];

  // Load until every kind of write has been answered a few times (or the load stops early), then a
  // moment more that differs from run to run, so the kill lands anywhere in the requests.
  const deadline = Date.now() + 20_000;
  const progressed = () =>
    chains.every((chain) => chain.refreshTokens.length > 3) &&
    uploaders.every((uploader) => uploader.answered.size >= 2) &&
    consents.exchanged.length >= 1 &&
    revocations.answered.filter((r) => r.kind === 'access_token').length >= 1 &&
    revocations.answered.filter((r) => r.kind === 'refresh_token').length >= 1 &&
    revocations.answered.filter((r) => r.kind === 'account').length >= 1;
  while (!progressed() && log.brokenAt.length + log.unexpected.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 200 + Math.floor(Math.random() * 500)));
  const killedAt = Date.now();
  await kill();
  await Promise.all(loops);
  assert.deepEqual(log.unexpected, [], 'answers before the kill');
  assert.equal(log.brokenAt.length, loops.length, 'every client stopped on the kill');
  assert.ok(log.brokenAt.every((at) => at >= killedAt), 'no connection broke before the kill');
  const refreshes = chains.reduce((n, chain) => n + chain.refreshTokens.length - 1, 0);
  assert.ok(progressed(), `the load ran: ${refreshes} refreshes, ${batches} uploads, ${consents.exchanged.length} consents, ${revocations.answered.length} revocations`);

  await restart();

  // Uploads: each day holds one batch's minutes whole — the last answered one, or a later one in
  // flight — or nothing if no batch for it was answered; the rollups are the sums of those minutes.
  for (const uploader of uploaders) {
    for (let d = 0; d < UPLOAD_DAYS; d++) {
      const day = uploader.firstDay + d * 86400;
      const rows = await storedStepMinutes(db, uploader.user.id, day, day + 86400);
      const answered = uploader.answered.get(day);
      const inFlight = uploader.inFlight !== null && uploader.inFlight % UPLOAD_DAYS === d ? uploader.inFlight : undefined;
      if (rows.length === 0) {
        assert.equal(answered, undefined, `day ${d}: batch ${answered} was answered and is lost`);
        continue;
      }
      assert.equal(rows.length, MINUTES_PER_BATCH, `day ${d}: ${rows.length} minutes, half a batch`);
      const batch = [answered, inFlight].find((b) => b !== undefined && rows.every((row, minute) => Number(row.value) === sampleValue(b, minute)));
      assert.ok(batch !== undefined, `day ${d}: the minutes are not wholly batch ${answered} (answered) or ${inFlight} (in flight)`);
      const total = rows.reduce((sum, row) => sum + Number(row.value), 0);
      const stored = (await storedStepDays(db, uploader.user.id)).find((row) => row.day_start === day);
      assert.equal(stored?.total, total, `day ${d}: the day's total is not the sum of its minutes`);
      const series = await send(base, 'GET', `/v1/users/me/activities/steps?start_time=${day}&end_time=${day + 86400}&granularity=hour&timezone=UTC`, { headers: { authorization: `Bearer ${uploader.token}` } });
      assert.equal(series.status, 200, series.text);
      assert.equal(series.json().total, total, `day ${d}: the API's total`);
    }
  }

  // Refresh chains: every token the clients were given is still there; the last refresh token each
  // received works (again, if its rotation had committed unheard), and no token has two successors.
  const successors: Tokens[] = [];
  for (const [i, chain] of chains.entries()) {
    const last = chain.refreshTokens.at(-1)!;
    const first = await refreshWith(client, last);
    assert.equal(first.status, 200, `chain ${i}: the last refresh token received does not work: ${first.text}`);
    const successor = first.json() as Tokens;
    assert.ok(!chain.refreshTokens.includes(successor.refresh_token));
    const again = await refreshWith(client, last);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json().refresh_token, successor.refresh_token, `chain ${i}: a second successor`);
    successors.push(successor);
    for (const token of [...chain.accessTokens.slice(-3), successor.access_token]) assert.equal(await profileStatus(base, token), 200, `chain ${i}: an access token`);

    // The family: the tokens received, plus the successor (made now, or by the rotation in flight
    // at the kill, replayed) — nothing lost, no fork — and only the successor is live.
    const family = (await db.selectFrom('refresh_tokens').select('family_id').where('token_key', '=', tokenKey(chain.refreshTokens[0]!)).executeTakeFirstOrThrow()).family_id;
    const refreshRows = await db.selectFrom('refresh_tokens').select(['token_key', 'rotated_at']).where('family_id', '=', family).execute();
    const refreshKeys = new Set(refreshRows.map((row) => row.token_key));
    assert.equal(refreshRows.length, chain.refreshTokens.length + 1, `chain ${i}: ${refreshRows.length} refresh tokens for ${chain.refreshTokens.length} received`);
    for (const token of [...chain.refreshTokens, successor.refresh_token]) assert.ok(refreshKeys.has(tokenKey(token)), `chain ${i}: a refresh token received is lost`);
    assert.deepEqual(refreshRows.filter((row) => row.rotated_at === null).map((row) => row.token_key), [tokenKey(successor.refresh_token)], `chain ${i}: the live refresh tokens`);
    const accessKeys = new Set((await db.selectFrom('access_tokens').select('token_key').where('family_id', '=', family).execute()).map((row) => row.token_key));
    assert.equal(accessKeys.size, chain.accessTokens.length + 1, `chain ${i}: ${accessKeys.size} access tokens for ${chain.accessTokens.length} received`);
    for (const token of chain.accessTokens) assert.ok(accessKeys.has(tokenKey(token)), `chain ${i}: an access token received is lost`);
  }

  // Consents: every answered exchange's tokens work; every answered code not exchanged works once;
  // the code whose exchange was in flight may have been used by it.
  for (const tokens of consents.exchanged) assert.equal(await profileStatus(base, tokens.access_token), 200, 'an answered code exchange is lost');
  for (const code of consents.kept) {
    const answer = await exchange(client, code);
    assert.equal(answer.status, 200, `an answered consent's code is lost: ${answer.text}`);
    assert.equal(await profileStatus(base, (answer.json() as Tokens).access_token), 200);
  }
  if (consents.exchangeInFlight !== null) {
    const answer = await exchange(client, consents.exchangeInFlight);
    if (answer.status !== 200) assert.equal(answer.json().error, 'invalid_grant', answer.text);
  }
  assert.ok(await db.selectFrom('grants').select('id').where('user_id', '=', consenter!.id).where('app_id', '=', registered.app.id).executeTakeFirst(), "the consenter's grant");

  // Revocations: every answered one still holds; a revoked access token ends only itself.
  for (const { tokens, kind } of revocations.answered) {
    const access = await send(base, 'GET', '/v1/users/me', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(access.status, 401, `${kind} revocation: the access token works after the restart`);
    assert.equal(access.json().error, 'invalid_token');
    const refresh = await refreshWith(client, tokens.refresh_token);
    if (kind === 'access_token') {
      assert.equal(refresh.status, 200, `the refresh token of a revoked access token: ${refresh.text}`);
    } else {
      assert.equal(refresh.status, 400, `${kind} revocation: the refresh token works after the restart`);
      assert.equal(refresh.json().error, 'invalid_grant');
    }
  }
  // A revocation in flight at the kill happened wholly or not at all: its tokens (and, for the
  // account page, the grant) are all gone or all there.
  for (const { tokens, kind } of revocations.inFlight.values()) {
    if (kind === 'access_token') continue; // one row: nothing to be half-done
    const grant = await db.selectFrom('grants').select('id').where('user_id', '=', leaver!.id).executeTakeFirst();
    const accessWorks = (await profileStatus(base, tokens.access_token)) === 200;
    const refreshWorks = (await refreshWith(client, tokens.refresh_token)).status === 200;
    assert.equal(refreshWorks, accessWorks, `${kind} revocation in flight at the kill: half done`);
    if (kind === 'account') assert.equal(grant !== undefined, accessWorks, 'account-page revocation in flight at the kill: the grant and its tokens disagree');
  }
  if (!leaving.grantMayExist) {
    assert.equal(await db.selectFrom('grants').select('id').where('user_id', '=', leaver!.id).executeTakeFirst(), undefined, 'the removed app is back');
  }

  // Last, as a reuse after the window ends the walker's grant: an older token of a chain never
  // yields a token the client has not seen — within the window it gets its own answer again.
  for (const [i, chain] of chains.entries()) {
    for (let n = Math.max(0, chain.refreshTokens.length - 4); n < chain.refreshTokens.length - 1; n++) {
      const answer = await refreshWith(client, chain.refreshTokens[n]!);
      if (answer.status === 200) assert.equal(answer.json().refresh_token, chain.refreshTokens[n + 1], `chain ${i}: token ${n} has a new successor`);
      else assert.equal(answer.json().error, 'invalid_grant', answer.text);
    }
  }
  const live = (await db.selectFrom('refresh_tokens').select('token_key').where('user_id', '=', walker!.id).where('rotated_at', 'is', null).execute()).map((row) => row.token_key).sort();
  const expected = successors.map((s) => tokenKey(s.refresh_token)).sort();
  assert.ok(live.length === 0 || JSON.stringify(live) === JSON.stringify(expected), 'the live refresh tokens: one per chain, or none after a reuse');
}
