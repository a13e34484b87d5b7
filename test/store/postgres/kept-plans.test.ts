/**
 * The statements the hot paths prepare by name (store/postgres/, and the turn statements the
 * stores declare, db/declared.ts) run on one plan kept per connection under PostgreSQL's default
 * `plan_cache_mode`, whatever the size of their batches (store/postgres/kept-plans.ts), and no
 * session setting changes how the pool's other statements (Kysely's, unnamed) are planned.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openDatabase, type Db } from '../../../src/db/database.js';
import { postgresDays } from '../../../src/store/postgres/series-days.js';
import { createStores } from '../../../src/store/stores.js';
import { createTestDatabase, POSTGRES_URL, postgresUnavailable, type TestDatabase } from '../../support/databases.js';

/** PostgreSQL plans a prepared statement for its values five times before it tries a kept plan. */
const CUSTOM_PLANS = 5;
const EXECUTIONS = 12;
/** Batch sizes that alternate, all below the 10 elements the planner guesses for an unknown array. */
const SIZES = [1, 3, 1, 2];

const batch = <T>(execution: number, make: (i: number) => T): T[] =>
  Array.from({ length: SIZES[execution % SIZES.length]! }, (_, i) => make(i));

interface Plans {
  name: string;
  generic_plans: number;
  custom_plans: number;
}

describe('plans kept for the statements prepared by name on PostgreSQL', { skip: postgresUnavailable() ?? false }, () => {
  let database: TestDatabase;
  // One connection, so that pg_prepared_statements (which shows the session's own) sees them all.
  let db: Db;
  before(async () => {
    database = await createTestDatabase('postgres');
    db = openDatabase(POSTGRES_URL!, { schema: database.schema!, poolSize: 1 });
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  const plans = async (): Promise<Plans[]> =>
    (await db.pool!.query<Plans>(`select name, generic_plans::int, custom_plans::int from pg_prepared_statements where name like 'stride_%' order by name`)).rows;

  it('run every batched read and write on its kept plan after the first executions, batches of one key or several', async () => {
    const pool = db.pool!;
    const stores = createStores(db);
    const days = postgresDays(pool);
    for (let execution = 0; execution < EXECUTIONS; execution++) {
      // The calls of one turn go out as one statement each (db/batched-calls.ts).
      await Promise.all(batch(execution, (i) => stores.bearer.find(`token-${execution}-${i}`, 1000)));
      await Promise.all(batch(execution, (i) => days(`user-${i}`, 'steps', 0, 86400 * (i + 1), 'totals')));
      await Promise.all(batch(execution, (i) => days(`user-${i}`, 'heartrate', 0, 86400 * (i + 1), 'hours')));
      await Promise.all(batch(execution, (i) => (i % 2 ? stores.apps.findByClientId(`client-${i}`) : stores.rotation.find(`refresh-${execution}-${i}`))));
      await Promise.all(batch(execution, (i) => stores.dpopProofs.remember(randomUUID(), 2000 + i)));
    }
    const found = await plans();
    assert.deepEqual(found.map((p) => p.name), [
      'stride_bearer_find_many',
      'stride_client_reads',
      'stride_dpop_remember_many',
      'stride_series_days_hours',
      'stride_series_days_totals',
    ]);
    for (const p of found) assert.deepEqual(p, { name: p.name, generic_plans: EXECUTIONS - CUSTOM_PLANS, custom_plans: CUSTOM_PLANS });
  });

  it('where an array given as it is would be planned again at every execution', async () => {
    // What the statements above avoid: the planner reads a short array's length from its value,
    // finds the plan made for it cheaper than one for any array, and never keeps one.
    const text = 'select k.key from unnest($1::text[]) as k(key) cross join lateral (select 1 from users u where u.id = k.key limit 1) u';
    for (let i = 0; i < EXECUTIONS; i++) await db.pool!.query({ name: 'stride_test_plain_unnest', text, values: [['a']] });
    const plain = (await plans()).find((p) => p.name === 'stride_test_plain_unnest');
    assert.deepEqual(plain, { name: 'stride_test_plain_unnest', generic_plans: 0, custom_plans: EXECUTIONS });
  });

  it('leave plan_cache_mode at the server\'s default on the pool\'s connections', async () => {
    const { rows } = await db.pool!.query<{ source: string; setting: string }>(`select source, setting from pg_settings where name = 'plan_cache_mode'`);
    assert.notEqual(rows[0]!.source, 'session');
    const fresh = new pg.Client({ connectionString: POSTGRES_URL });
    await fresh.connect();
    try {
      assert.equal(rows[0]!.setting, (await fresh.query('show plan_cache_mode')).rows[0].plan_cache_mode);
    } finally {
      await fresh.end();
    }
  });
});
