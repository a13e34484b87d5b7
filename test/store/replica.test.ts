/**
 * Step series read from a real streaming replica (a primary and a `pg_basebackup -R -X stream`
 * copy of the test's own), with read-your-writes: an app reads its user's upload at once, reads
 * of older data come from the replica, every access decision stays on the primary, and a replica
 * that goes away leaves the reads to the primary.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { lsnValue } from '../../src/store/replica.js';
import { createStores } from '../../src/store/stores.js';
import { STEPS, utc, type Series } from '../api/steps-support.js';
import { testClock, type TestApp } from '../support/app.js';
import { createPostgresCluster, createStreamingReplica, postgresClusterUnavailable, type PostgresCluster } from '../support/postgres-cluster.js';
import { bearer, userWithToken } from '../support/tokens.js';

describe('lsnValue', () => {
  it('orders WAL positions as PostgreSQL does, across the high half', () => {
    assert.ok(lsnValue('16/B374D849') > lsnValue('16/B374D848'));
    assert.ok(lsnValue('1/0') > lsnValue('0/FFFFFFFF'));
    assert.equal(lsnValue('0/0'), 0n);
  });
});

describe('series reads from a streaming replica', { skip: postgresClusterUnavailable() ?? false }, () => {
  let primary: PostgresCluster;
  let replica: PostgresCluster;
  let primaryDb: Db;
  let t: TestApp;
  let replicaAdmin: pg.Client;

  before(async () => {
    primary = await createPostgresCluster();
    primaryDb = openDatabase(primary.url);
    await migrateToLatest(primaryDb);
    replica = await createStreamingReplica(primary);
    const replicaUrl = primary.url.replace(`:${primary.port}/`, `:${replica.port}/`);
    replicaAdmin = new pg.Client({ connectionString: replicaUrl });
    replicaAdmin.on('error', () => undefined); // the last test stops the replica
    await replicaAdmin.connect();
    const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT: 'off', PUBLIC_URL: 'http://stride.test', DATABASE_URL: primary.url, DATABASE_REPLICA_URL: replicaUrl });
    const stores = createStores(primaryDb, openDatabase(replicaUrl));
    const clock = testClock();
    const app = await buildApp({ config, stores, clock });
    await app.ready();
    t = { app, config, clock, database: { db: primaryDb, stores, url: primary.url, drop: async () => undefined }, close: () => app.close() };
  });
  after(async () => {
    await replicaAdmin?.end().catch(() => undefined);
    await t?.app.close();
    await t?.database.stores.close();
    await replica?.destroy();
    await primary?.destroy();
  });

  const day = utc(2026, 3, 2);
  const samples = (value: number) => Array.from({ length: 60 }, (_, i) => ({ start_time: day + 60 * i, value }));
  const upload = (token: string, value: number) => t.app.inject({ method: 'POST', url: STEPS, headers: bearer(token), payload: { samples: samples(value) } });
  const total = async (token: string) => {
    const response = await t.app.inject({ method: 'GET', url: `${STEPS}?start_time=${day}&end_time=${day + 86400}&granularity=day`, headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
    return (response.json() as Series).total;
  };
  const paused = async (run: () => Promise<void>) => {
    await replicaAdmin.query('select pg_wal_replay_pause()');
    try {
      await run();
    } finally {
      await replicaAdmin.query('select pg_wal_replay_resume()');
    }
  };
  const caughtUp = async () => {
    const { rows } = await primaryDb.pool!.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
    for (let i = 0; i < 200; i++) {
      const replayed = await replicaAdmin.query<{ lsn: string }>('select pg_last_wal_replay_lsn()::text as lsn');
      if (lsnValue(replayed.rows[0]!.lsn) >= lsnValue(rows[0]!.lsn)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the replica did not catch up');
  };

  it('answers an app with its own upload at once, while the replica has not replayed it', async () => {
    const { token } = await userWithToken(t);
    await paused(async () => {
      assert.equal((await upload(token, 10)).statusCode, 200);
      assert.equal(await total(token), 600);
      assert.equal((await upload(token, 20)).statusCode, 200);
      assert.equal(await total(token), 1200);
    });
  });

  it('reads older data from the replica', async () => {
    const { user, token } = await userWithToken(t);
    assert.equal((await upload(token, 5)).statusCode, 200);
    await caughtUp();
    await paused(async () => {
      // Changed on the primary behind Stride's back: the replica, paused, still has the upload,
      // and the series that Stride answers is the replica's.
      await primaryDb.pool!.query('delete from series_days where user_id = $1', [user.id]);
      assert.equal(await total(token), 300);
    });
    await caughtUp();
    assert.equal(await total(token), 0);
  });

  it('refuses a revoked grant at once, whatever the replica has replayed', async () => {
    const { user, token } = await userWithToken(t);
    assert.equal(await total(token), 0);
    await paused(async () => {
      const grant = await primaryDb.kysely.selectFrom('grants').select(['app_id']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
      await t.database.stores.grants.revokeForUser(user.id, grant.app_id, t.clock());
      const response = await t.app.inject({ method: 'GET', url: `${STEPS}?start_time=${day}&end_time=${day + 86400}&granularity=day`, headers: bearer(token) });
      assert.equal(response.statusCode, 401);
    });
  });

  it('reads from the primary while the replica is down', async () => {
    const { token } = await userWithToken(t);
    assert.equal((await upload(token, 7)).statusCode, 200);
    await caughtUp();
    await replica.stop('immediate');
    try {
      assert.equal(await total(token), 420);
      assert.equal((await upload(token, 8)).statusCode, 200);
      assert.equal(await total(token), 480);
    } finally {
      await replica.start();
    }
  });
});
