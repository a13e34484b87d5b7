/**
 * The code store's redemption (src/store/codes.ts) on each dialect: a code is consumed once, its
 * pair stored with it or nothing written, redemptions asked for together (one SQLite commit) each
 * decided alone, and on SQLite never run inside another request's open Kysely transaction.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import type { AuthorizationCode } from '../../src/store/codes.js';
import type { AccessTokenRow, RefreshTokenRow } from '../../src/store/tokens.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser } from '../support/tokens.js';

forEachDialect('authorization code redemption', (dialect) => {
  let t: TestApp;
  let grant: { id: string; appId: string; userId: string };
  before(async () => {
    t = await createTestApp(dialect);
    const user = await createUser(t);
    const { app } = await registerApp(t.database.stores.apps, t.clock, user.id, {
      name: 'Redeeming App',
      redirectUris: ['https://app.example.test/callback'],
      scopes: ['read_profile'],
      isPublic: false,
    });
    const now = t.clock();
    grant = { id: randomUUID(), appId: app.id, userId: user.id };
    await t.database.db.kysely.insertInto('grants')
      .values({ id: grant.id, user_id: user.id, app_id: app.id, scope: 'read_profile', created_at: now, updated_at: now, last_used_at: null })
      .execute();
  });
  after(() => t.close());

  async function newCode(expiresIn = 60): Promise<AuthorizationCode> {
    const now = t.clock();
    const code: AuthorizationCode = {
      code_hash: `code-${randomUUID()}`, app_id: grant.appId, user_id: grant.userId, grant_id: grant.id, redirect_uri: 'https://app.example.test/callback',
      scope: 'read_profile', code_challenge: null, code_challenge_method: null, expires_at: now + expiresIn, consumed_at: null, created_at: now, requested_scope: null,
    };
    await t.database.stores.codes.insert(code);
    return code;
  }

  function pair(code: AuthorizationCode, tag: string, grantId = grant.id): { access: AccessTokenRow; refresh: RefreshTokenRow } {
    const now = t.clock();
    const columns = { family_id: code.code_hash, grant_id: grantId, app_id: code.app_id, user_id: code.user_id, scope: code.scope, created_at: now, jkt: null };
    return {
      access: { ...columns, token_key: `access-${tag}-${randomUUID()}`, expires_at: now + 3600 },
      refresh: { ...columns, token_key: `refresh-${tag}-${randomUUID()}`, expires_at: now + 86400, rotated_at: null, replay_response: null, requested_scope: null },
    };
  }

  const redeem = (code: AuthorizationCode, issued: { access: AccessTokenRow; refresh: RefreshTokenRow }) =>
    t.database.stores.codes.redeem(code.code_hash, t.clock(), issued.access, issued.refresh);

  const storedFamily = async (code: AuthorizationCode) =>
    (await t.database.db.kysely.selectFrom('refresh_tokens').select('token_key').where('family_id', '=', code.code_hash).execute()).map((row) => row.token_key);

  it('redeems a code once: of redemptions asked for together, one stores its pair and the others are answered false', async () => {
    const code = await newCode();
    const pairs = Array.from({ length: 20 }, (_, i) => pair(code, `try${i}`));
    const results = await Promise.all(pairs.map((issued) => redeem(code, issued)));
    assert.equal(results.filter(Boolean).length, 1);
    const winner = pairs[results.indexOf(true)]!;
    assert.deepEqual(await storedFamily(code), [winner.refresh.token_key], 'only the winner stored a pair');
    assert.notEqual((await t.database.stores.codes.find(code.code_hash))?.consumed_at, null);
    assert.equal(await redeem(code, pair(code, 'late')), false, 'a used code stays used');
  });

  it('redemptions of several codes asked for together each store their own pair', async () => {
    const codes = await Promise.all(Array.from({ length: 5 }, () => newCode()));
    const pairs = codes.map((code, i) => pair(code, `own${i}`));
    assert.deepEqual(await Promise.all(codes.map((code, i) => redeem(code, pairs[i]!))), [true, true, true, true, true]);
    for (const [i, code] of codes.entries()) assert.deepEqual(await storedFamily(code), [pairs[i]!.refresh.token_key]);
  });

  it('refuses an expired code and writes nothing', async () => {
    const code = await newCode(0);
    assert.equal(await redeem(code, pair(code, 'expired')), false);
    assert.equal((await t.database.stores.codes.find(code.code_hash))?.consumed_at, null);
    assert.deepEqual(await storedFamily(code), []);
  });

  it('a pair whose grant is gone (deleted meanwhile) is answered false, the code left unused, and fails no redemption asked with it', async () => {
    const gone = await newCode();
    const other = await newCode();
    const otherPair = pair(other, 'beside');
    const [lost, won] = await Promise.all([redeem(gone, pair(gone, 'orphan', randomUUID())), redeem(other, otherPair)]);
    assert.equal(lost, false);
    assert.equal(won, true);
    assert.equal((await t.database.stores.codes.find(gone.code_hash))?.consumed_at, null, 'rolled back with its pair');
    assert.deepEqual(await storedFamily(gone), []);
    assert.deepEqual(await storedFamily(other), [otherPair.refresh.token_key]);
  });

  if (dialect === 'sqlite') {
    it('while a Kysely transaction is open, waits for it instead of running inside it', async () => {
      const db = t.database.db;
      const code = await newCode();
      const issued = pair(code, 'outside');
      let redeemed: Promise<boolean> | undefined;
      class Rollback extends Error {}
      await assert.rejects(
        db.kysely.transaction().execute(async (trx) => {
          await trx.updateTable('grants').set({ updated_at: t.clock() }).where('id', '=', grant.id).execute();
          assert.ok(db.sqlite!.inTransaction);
          redeemed = redeem(code, issued);
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Rollback();
        }),
        Rollback,
      );
      assert.equal(await redeemed, true);
      assert.deepEqual(await storedFamily(code), [issued.refresh.token_key], 'committed on its own, not rolled back with the transaction');
    });
  }
});
