/**
 * The refresh-rotation store (src/store/refresh-rotation.ts) on each dialect: single use under
 * contention from two processes sharing the database, all-or-nothing writes, the SQLite fast path
 * never running inside another request's open transaction, and the token tables' narrower indexes
 * (deleting a user or an app still ends every token).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import type { Rotation } from '../../src/store/refresh-rotation.js';
import { createStores } from '../../src/store/stores.js';
import type { AccessTokenRow, RefreshTokenRow } from '../../src/store/tokens.js';
import { sweepExpired } from '../../src/store/sweep.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser, type TestUser } from '../support/tokens.js';

const WORKER = new URL('./token-rotation-worker.js', import.meta.url);

interface Subject {
  user: TestUser;
  appId: string;
  clientId: string;
  grantId: string;
}

async function subject(t: TestApp, user?: TestUser): Promise<Subject> {
  const db = t.database.db.kysely;
  const now = t.clock();
  const owner = user ?? (await createUser(t));
  const { app } = await registerApp(t.database.stores.apps, t.clock, owner.id, {
    name: 'Rotating App',
    redirectUris: ['https://app.example.test/callback'],
    scopes: ['read_profile'],
    isPublic: false,
  });
  const grantId = randomUUID();
  await db.insertInto('grants')
    .values({ id: grantId, user_id: owner.id, app_id: app.id, scope: 'read_profile', created_at: now, updated_at: now, last_used_at: null })
    .execute();
  return { user: owner, appId: app.id, clientId: app.clientId, grantId };
}

function refreshRow(s: Subject, hash: string, now: number, familyId = `family-${hash}`): RefreshTokenRow {
  return {
    token_key: hash, family_id: familyId, grant_id: s.grantId, app_id: s.appId, user_id: s.user.id, scope: 'read_profile',
    expires_at: now + 86400, created_at: now, rotated_at: null, replay_response: null, jkt: null, requested_scope: null,
  };
}

function accessRow(s: Subject, hash: string, now: number, familyId: string): AccessTokenRow {
  return {
    token_key: hash, family_id: familyId, grant_id: s.grantId, app_id: s.appId, user_id: s.user.id, scope: 'read_profile',
    expires_at: now + 3600, created_at: now, jkt: null,
  };
}

function rotationOf(s: Subject, oldHash: string, now: number, tag: string): Rotation {
  const familyId = `family-${oldHash}`;
  return {
    oldHash,
    now,
    replayResponse: `sealed-by-${tag}`,
    access: accessRow(s, `access-${tag}-${oldHash}`, now, familyId),
    refresh: refreshRow(s, `refresh-${tag}-${oldHash}`, now, familyId),
  };
}

/** Runs `jobs` in another process against the same database; resolves to which ones it won. */
function startWorker(url: string): { ready: Promise<void>; run(jobs: Rotation[], together: boolean): Promise<boolean[]> } {
  const child = spawn(process.execPath, [WORKER.pathname, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = (): Promise<string> => new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`rotation worker exited with ${code}`)));
  });
  const ready = next().then((line) => assert.equal(line, 'ready'));
  return {
    ready,
    async run(jobs, together) {
      const answer = next();
      child.stdin.write(`${JSON.stringify({ jobs, together })}\n`);
      return JSON.parse(await answer) as boolean[];
    },
  };
}

forEachDialect('refresh-token rotation store', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('rotates a live token once: the pair is stored, a second rotation writes nothing', async () => {
    const db = t.database.db;
    const rotation = createStores(db).rotation;
    const s = await subject(t);
    const now = t.clock();
    const old = refreshRow(s, `old-${randomUUID()}`, now);
    await db.kysely.insertInto('refresh_tokens').values(old).execute();
    assert.deepEqual(await rotation.find(old.token_key), old);
    assert.equal(await rotation.find('no-such-token'), undefined);

    const first = rotationOf(s, old.token_key, now + 5, 'first');
    assert.equal(await rotation.rotate(first), true);
    assert.deepEqual(await rotation.find(old.token_key), { ...old, rotated_at: now + 5, replay_response: 'sealed-by-first' });
    assert.deepEqual(await rotation.find(first.refresh.token_key), first.refresh);
    const access = await db.kysely.selectFrom('access_tokens').selectAll().where('token_key', '=', first.access.token_key).executeTakeFirst();
    assert.deepEqual(access, first.access);

    const second = rotationOf(s, old.token_key, now + 6, 'second');
    assert.equal(await rotation.rotate(second), false);
    assert.equal((await rotation.find(old.token_key))?.replay_response, 'sealed-by-first', 'the first answer is kept');
    assert.equal(await rotation.find(second.refresh.token_key), undefined);
    assert.equal(await db.kysely.selectFrom('access_tokens').select('token_key').where('token_key', '=', second.access.token_key).executeTakeFirst(), undefined);
  });

  it("reads a refresh token by its hash, whichever app's it is, and sees its rotation", async () => {
    const db = t.database.db;
    const rotation = createStores(db).rotation;
    const s = await subject(t);
    const other = await subject(t, s.user);
    const now = t.clock();
    const mine = refreshRow(s, `mine-${randomUUID()}`, now);
    const theirs = refreshRow(other, `theirs-${randomUUID()}`, now);
    await db.kysely.insertInto('refresh_tokens').values([mine, theirs]).execute();

    assert.deepEqual(await rotation.find(mine.token_key), mine);
    assert.deepEqual(await rotation.find(theirs.token_key), theirs, "another app's token is returned as it is: the caller compares app_id");
    assert.equal(await rotation.find('no-such-token'), undefined);
    await rotation.rotate(rotationOf(s, mine.token_key, now + 1, 'seen'));
    assert.deepEqual(await rotation.find(mine.token_key), { ...mine, rotated_at: now + 1, replay_response: 'sealed-by-seen' });
  });

  it("the apps and refresh tokens read in one turn each get their own answer (on PostgreSQL, from one statement)", async () => {
    const db = t.database.db;
    const stores = createStores(db);
    const s = await subject(t);
    const other = await subject(t, s.user);
    const now = t.clock();
    const mine = refreshRow(s, `mine-${randomUUID()}`, now);
    const theirs = refreshRow(other, `theirs-${randomUUID()}`, now);
    await db.kysely.insertInto('refresh_tokens').values([mine, theirs]).execute();

    const statements: string[] = [];
    const pool = db.pool;
    const query = pool?.query;
    if (pool) {
      pool.query = ((config: { text: string }, ...rest: unknown[]) => {
        statements.push(config.text);
        return (query as (...args: unknown[]) => unknown).call(pool, config, ...rest);
      }) as typeof pool.query;
    }
    try {
      // Apps for the requests of a turn, tokens for those whose client was authenticated in it.
      const [app, token, otherApp, otherToken, noApp, noToken] = await Promise.all([
        stores.apps.findByClientId(s.clientId),
        stores.rotation.find(mine.token_key),
        stores.apps.findByClientId(other.clientId),
        stores.rotation.find(theirs.token_key),
        stores.apps.findByClientId('sc_nosuchclient0000000000'),
        stores.rotation.find('no-such-token'),
      ]);
      assert.equal(app?.id, s.appId);
      assert.equal(app?.isPublic, false);
      assert.deepEqual(token, mine);
      assert.equal(otherApp?.id, other.appId);
      assert.deepEqual(otherToken, theirs);
      assert.equal(noApp, undefined);
      assert.equal(noToken, undefined);
    } finally {
      if (pool) pool.query = query!;
    }
    if (pool) assert.equal(statements.length, 1, `one statement for the turn's reads, not ${statements.length}`);
  });

  it('a read the database cannot do fails alone, not the reads asked with it', async () => {
    const db = t.database.db;
    const rotation = createStores(db).rotation;
    const s = await subject(t);
    const mine = refreshRow(s, `mine-${randomUUID()}`, t.clock());
    await db.kysely.insertInto('refresh_tokens').values(mine).execute();
    // PostgreSQL refuses a NUL in a text value (SQLite stores it); on SQLite the reads of one turn
    // share a read transaction, and a failing one is asked again alone.
    const [first, unreadable, last] = await Promise.allSettled([rotation.find(mine.token_key), rotation.find('bad\u0000key'), rotation.find(mine.token_key)]);
    for (const read of [first, last]) assert.deepEqual(read!.status === 'fulfilled' && read.value, mine);
    assert.ok(unreadable!.status === 'rejected' || unreadable!.value === undefined);
  });

  it('refuses an expired or unknown token and writes nothing', async () => {
    const db = t.database.db;
    const rotation = createStores(db).rotation;
    const s = await subject(t);
    const now = t.clock();
    const old = { ...refreshRow(s, `old-${randomUUID()}`, now), expires_at: now + 10 };
    await db.kysely.insertInto('refresh_tokens').values(old).execute();
    assert.equal(await rotation.rotate(rotationOf(s, old.token_key, now + 10, 'late')), false);
    assert.equal(await rotation.rotate(rotationOf(s, 'unknown-hash', now, 'ghost')), false);
    assert.equal((await rotation.find(old.token_key))?.rotated_at, null);
    const stored = await db.kysely.selectFrom('refresh_tokens').select('token_key').where('token_key', 'like', 'refresh-%').where('grant_id', '=', s.grantId).execute();
    assert.deepEqual(stored, []);
  });

  it('a failed insert rolls the rotation back (all or nothing)', async () => {
    const db = t.database.db;
    const rotation = createStores(db).rotation;
    const s = await subject(t);
    const now = t.clock();
    const old = refreshRow(s, `old-${randomUUID()}`, now);
    const taken = refreshRow(s, `taken-${randomUUID()}`, now);
    await db.kysely.insertInto('refresh_tokens').values([old, taken]).execute();
    const clash = rotationOf(s, old.token_key, now, 'clash');
    clash.refresh = { ...clash.refresh, token_key: taken.token_key }; // a primary-key violation
    await assert.rejects(rotation.rotate(clash));
    assert.equal((await rotation.find(old.token_key))?.rotated_at, null, 'the old token is still live');
    assert.equal(await db.kysely.selectFrom('access_tokens').select('token_key').where('token_key', '=', clash.access.token_key).executeTakeFirst(), undefined);
    assert.equal(await rotation.rotate(rotationOf(s, old.token_key, now, 'retry')), true);
  });

  it('rotations asked for together: one winner per token, and a failing one fails alone', async () => {
    const db = t.database.db;
    const rotation = createStores(db).rotation;
    const s = await subject(t);
    const now = t.clock();
    const olds = Array.from({ length: 6 }, () => refreshRow(s, `old-${randomUUID()}`, now));
    const taken = refreshRow(s, `taken-${randomUUID()}`, now);
    await db.kysely.insertInto('refresh_tokens').values([...olds, taken]).execute();
    const clash = rotationOf(s, olds[5]!.token_key, now, 'clash');
    clash.refresh = { ...clash.refresh, token_key: taken.token_key };
    // Who wins a token raced by several callers is up to the database (PostgreSQL runs them on
    // several connections), so each token is checked for exactly one winner, whose answer is kept.
    const attempts = [
      ...olds.slice(0, 5).map((old) => rotationOf(s, old.token_key, now, 'x')),
      rotationOf(s, olds[0]!.token_key, now, 'twin'),
      ...Array.from({ length: 200 }, () => rotationOf(s, olds[1]!.token_key, now, `crowd-${randomUUID()}`)),
    ];
    const [clashResult, ...results] = await Promise.allSettled([rotation.rotate(clash), ...attempts.map((a) => rotation.rotate(a))]);
    assert.equal(clashResult!.status, 'rejected');
    for (const old of olds.slice(0, 5)) {
      const winners = attempts.filter((a, i) => a.oldHash === old.token_key && results[i]!.status === 'fulfilled' && results[i]!.value === true);
      assert.equal(winners.length, 1, 'one winner per token');
      assert.ok(attempts.every((a, i) => a.oldHash !== old.token_key || results[i]!.status === 'fulfilled'), 'losers are answered false, not failed');
      assert.equal((await rotation.find(old.token_key))?.replay_response, winners[0]!.replayResponse);
      const issued = await db.kysely.selectFrom('refresh_tokens').select('token_key').where('family_id', '=', `family-${old.token_key}`).where('token_key', '!=', old.token_key).execute();
      assert.deepEqual(issued.map((r) => r.token_key), [winners[0]!.refresh.token_key], 'only the winner stored a new pair');
    }
    assert.equal((await rotation.find(olds[5]!.token_key))?.rotated_at, null, 'the failed rotation left its token live');
    assert.equal(await db.kysely.selectFrom('access_tokens').select('token_key').where('token_key', '=', clash.access.token_key).executeTakeFirst(), undefined);
  });

  for (const together of [false, true]) {
    const how = together ? 'all at once (grouped), in opposite orders' : 'one after another';
    it(`two processes rotating the same tokens ${how}: each token rotates exactly once, one pair per token`, async () => {
      const db = t.database.db;
      const s = await subject(t);
      const now = t.clock();
      const olds = Array.from({ length: 150 }, () => refreshRow(s, `old-${randomUUID()}`, now));
      await db.kysely.insertInto('refresh_tokens').values(olds).execute();
      const a = startWorker(t.database.url);
      const b = startWorker(t.database.url);
      await Promise.all([a.ready, b.ready]);
      const jobsA = olds.map((old) => rotationOf(s, old.token_key, now + 1, 'a'));
      const jobsB = olds.map((old) => rotationOf(s, old.token_key, now + 1, 'b'));
      const [wonA, reversedB] = await Promise.all([a.run(jobsA, together), b.run(together ? [...jobsB].reverse() : jobsB, together)]);
      const wonB = together ? [...reversedB].reverse() : reversedB;
      assert.equal(wonA.length, olds.length);
      for (let i = 0; i < olds.length; i++) assert.notEqual(wonA[i], wonB[i], `token ${i}: exactly one winner`);

      const rows = await db.kysely.selectFrom('refresh_tokens').selectAll().where('grant_id', '=', s.grantId).execute();
      const byHash = new Map(rows.map((row) => [row.token_key, row]));
      for (let i = 0; i < olds.length; i++) {
        const winner = wonA[i] ? 'a' : 'b';
        const loser = wonA[i] ? 'b' : 'a';
        const old = byHash.get(olds[i]!.token_key)!;
        assert.equal(old.rotated_at, now + 1);
        assert.equal(old.replay_response, `sealed-by-${winner}`);
        assert.ok(byHash.has(`refresh-${winner}-${old.token_key}`));
        assert.ok(!byHash.has(`refresh-${loser}-${old.token_key}`));
      }
      assert.equal(rows.length, 2 * olds.length, 'the old tokens and one successor each');
      const accessCount = await db.kysely.selectFrom('access_tokens').select((eb) => eb.fn.countAll<number>().as('n')).where('grant_id', '=', s.grantId).executeTakeFirstOrThrow();
      assert.equal(Number(accessCount.n), olds.length);
    });
  }

  it('deleting the app, the granting user or the app owner, or revoking the app, still ends every token', async () => {
    const db = t.database.db.kysely;
    const now = t.clock();
    const tokensOf = async (s: Subject) => {
      const familyId = `family-${randomUUID()}`;
      await db.insertInto('access_tokens').values(accessRow(s, `a-${randomUUID()}`, now, familyId)).execute();
      await db.insertInto('refresh_tokens').values(refreshRow(s, `r-${randomUUID()}`, now, familyId)).execute();
    };
    const count = async (s: Subject) => {
      const access = await db.selectFrom('access_tokens').select('token_key').where('app_id', '=', s.appId).where('user_id', '=', s.user.id).execute();
      const refresh = await db.selectFrom('refresh_tokens').select('token_key').where('app_id', '=', s.appId).where('user_id', '=', s.user.id).execute();
      return access.length + refresh.length;
    };
    const bystander = await subject(t);
    await tokensOf(bystander);

    const byApp = await subject(t);
    await tokensOf(byApp);
    await db.deleteFrom('apps').where('id', '=', byApp.appId).execute();
    assert.equal(await count(byApp), 0, 'app deleted');

    // A user who granted someone else's app.
    const developer = await subject(t);
    const walker = await createUser(t);
    const grantId = randomUUID();
    await db.insertInto('grants').values({ id: grantId, user_id: walker.id, app_id: developer.appId, scope: 'read_profile', created_at: now, updated_at: now, last_used_at: null }).execute();
    const walkerGrant: Subject = { user: walker, appId: developer.appId, clientId: developer.clientId, grantId };
    await tokensOf(walkerGrant);
    await tokensOf(developer);
    await db.deleteFrom('users').where('id', '=', walker.id).execute();
    assert.equal(await count(walkerGrant), 0, 'granting user deleted');
    assert.equal(await count(developer), 2, "the developer's own tokens stay");
    await db.deleteFrom('users').where('id', '=', developer.user.id).execute();
    assert.equal(await count(developer), 0, 'app owner deleted');

    const revoked = await subject(t);
    await tokensOf(revoked);
    assert.equal(await t.database.stores.grants.revokeForUser(revoked.user.id, revoked.appId, t.clock()), true);
    assert.equal(await count(revoked), 0, 'revoked on the account page');

    assert.equal(await count(bystander), 2);
  });

  if (dialect === 'sqlite') {
    it('while a Kysely transaction is open, waits for it instead of running inside it', async () => {
      const db = t.database.db;
      const rotation = createStores(db).rotation;
      const s = await subject(t);
      const now = t.clock();
      const old = refreshRow(s, `old-${randomUUID()}`, now);
      await db.kysely.insertInto('refresh_tokens').values(old).execute();
      const uncommitted = refreshRow(s, `uncommitted-${randomUUID()}`, now);
      let rotated: Promise<boolean> | undefined;
      let found: Promise<RefreshTokenRow | undefined> | undefined;
      class Rollback extends Error {}
      await assert.rejects(
        db.kysely.transaction().execute(async (trx) => {
          await trx.insertInto('refresh_tokens').values(uncommitted).execute();
          assert.ok(db.sqlite!.inTransaction);
          found = rotation.find(uncommitted.token_key);
          rotated = rotation.rotate(rotationOf(s, old.token_key, now + 1, 'outside'));
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Rollback();
        }),
        Rollback,
      );
      assert.equal(await found, undefined, 'never saw the rolled-back row');
      assert.equal(await rotated, true);
      assert.equal((await rotation.find(old.token_key))?.replay_response, 'sealed-by-outside', 'committed on its own');
    });

    it('the token tables keep the indexes that revocation, the cascade and the sweeper use', async () => {
      const handle = t.database.db.sqlite!;
      for (const table of ['access_tokens', 'refresh_tokens']) {
        const indexes = (handle.prepare(`PRAGMA index_list(${table})`).all() as Array<{ name: string }>).map((i) => i.name).sort();
        assert.deepEqual(indexes.filter((name) => !name.startsWith('sqlite_autoindex')), [`${table}_expires_idx`, `${table}_grant_idx`]);
        const foreignKeys = handle.prepare(`PRAGMA foreign_key_list(${table})`).all() as Array<{ table: string; from: string; on_delete: string }>;
        assert.deepEqual(foreignKeys.map((k) => [k.table, k.from, k.on_delete]), [['grants', 'grant_id', 'CASCADE']]);
        for (const where of ['grant_id = ? AND family_id = ?', 'grant_id = ?', 'expires_at <= ?']) {
          const plan = (handle.prepare(`EXPLAIN QUERY PLAN DELETE FROM ${table} WHERE ${where}`).all(...where.split('?').slice(1).map(() => 'x')) as Array<{ detail: string }>).map((p) => p.detail).join(' ');
          assert.match(plan, /USING (COVERING )?INDEX/, `${table} ${where}: ${plan}`);
        }
      }
    });
  }

  it('the sweeper still deletes expired tokens', async () => {
    const s = await subject(t);
    const now = t.clock();
    await t.database.db.kysely.insertInto('access_tokens').values({ ...accessRow(s, `expiring-${randomUUID()}`, now, 'f'), expires_at: now + 1 }).execute();
    const { deleted } = await sweepExpired(t.database.db.kysely, t.database.db.dialect, now + 2, 0);
    assert.ok(deleted.access_tokens >= 1);
    assert.equal(await t.database.db.kysely.selectFrom('access_tokens').select('token_key').where('expires_at', '<=', now + 2).executeTakeFirst(), undefined);
  });
});
