/**
 * PostgreSQL's partitions (docs/decisions/0039-postgres-partitions.md) as the server uses them: the
 * sweeper makes the coming months and days ahead and, with the clock moved past retention, drops
 * the days of events and finished deliveries whole; a 30-day read of day rows touches at most two
 * monthly partitions; a read across a month's end answers every day of both months.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/db/database.js';
import { partitionsOf } from '../../../src/db/partitions.js';
import { sweepExpired } from '../../../src/store/sweep.js';
import { readMetric, upload } from '../../api/sum-metrics-support.js';
import { utc } from '../../api/steps-support.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { DIALECTS, POSTGRES_URL } from '../../support/databases.js';
import { eventRows, insertEventRows } from '../../support/events.js';
import { createUser, issueAccessToken, userWithToken } from '../../support/tokens.js';

const DAY = 86_400;

if (DIALECTS.includes('postgres')) {
  describe('partitions [postgres]', () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp('postgres');
    });
    after(() => t.close());

    /** The partition each row of `table` matching `where` sits in. */
    const homes = async (table: string, where: ReturnType<typeof sql>) =>
      (await sql<{ home: string }>`select tableoid::regclass::text as home from ${sql.table(table)} where ${where} order by 1`.execute(t.database.db.kysely)).rows.map((r) => r.home);

    it('the sweeper makes partitions ahead and drops expired days of events and finished deliveries whole', async () => {
      const db = t.database.db.kysely;
      const now = utc(2031, 1, 30, 12);
      t.clock.set(now);
      const user = await createUser(t);
      const { appId } = await issueAccessToken(t, user, ['read_profile'], 3600);
      const first = await sweepExpired(db, 'postgres', now, now - 30 * DAY);
      for (const name of ['series_days_2031_01', 'series_days_2031_02', 'series_days_2031_03', 'events_2031_01_30', 'events_2031_02_06', 'webhook_deliveries_2031_02_06']) {
        assert.ok(first.partitions.made.includes(name), `${name} made ahead`);
      }
      assert.ok(!first.partitions.made.includes('events_2031_02_07'), 'seven days ahead, no more');
      assert.deepEqual((await sweepExpired(db, 'postgres', now, now - 30 * DAY)).partitions.made, [], 'made once');

      const [, tomorrow] = await insertEventRows(db, [
        { app_id: appId, type: 'steps.updated', user_id: user.id, data: {}, created_at: now },
        { app_id: appId, type: 'steps.updated', user_id: user.id, data: {}, created_at: now + DAY },
      ]);
      const ofApp = sql`app_number = (select number from apps where id = ${appId})`;
      assert.deepEqual(await homes('events', ofApp), ['events_2031_01_30', 'events_2031_01_31']);
      await db.insertInto('webhook_endpoints').values({ id: 'we_sweep', app_id: appId, url: 'https://app.example.test/hook', event_types: '*', state: 'active', secret: 's', secret_unshown: 0, verify_attempts: 0, created_at: now, updated_at: now }).execute();
      const delivery = (id: string, state: 'pending' | 'succeeded' | 'failed', createdAt: number) => ({
        id, endpoint_id: 'we_sweep', event_id: 'evt_today', type: 'steps.updated', user_id: user.id, payload: '{}', state, attempts: 1, next_attempt_at: createdAt, created_at: createdAt,
      });
      await db.insertInto('webhook_deliveries').values([delivery('wd_done', 'succeeded', now), delivery('wd_done_tomorrow', 'failed', now + DAY), delivery('wd_pending', 'pending', now + DAY)]).execute();

      // Thirty days and a half later, the 30th of January is past retention, the 31st not wholly.
      const later = now + 30 * DAY + DAY / 2;
      t.clock.set(later);
      const second = await sweepExpired(db, 'postgres', later, later - 30 * DAY);
      assert.deepEqual(second.partitions.dropped.filter((name) => name.includes('2031_01_30')), ['events_2031_01_30', 'webhook_deliveries_2031_01_30']);
      assert.ok(second.partitions.made.includes('events_2031_03_08') && second.partitions.made.includes('series_days_2031_04'));
      assert.ok(!(await partitionsOf(db, 'events')).includes('events_2031_01_30'));
      assert.deepEqual((await eventRows(db, { appId })).map((r) => r.id), [tomorrow]);
      assert.deepEqual((await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', 'we_sweep').orderBy('id').execute()).map((r) => r.id), ['wd_done_tomorrow', 'wd_pending']);

      // A day later still: the 31st's events go whole; its deliveries' partition stays while one is pending, its finished one goes alone.
      const third = await sweepExpired(db, 'postgres', later + DAY, later + DAY - 30 * DAY);
      assert.ok(third.partitions.dropped.includes('events_2031_01_31'));
      assert.ok(!third.partitions.dropped.includes('webhook_deliveries_2031_01_31'), 'a pending delivery keeps its day');
      assert.equal(third.deleted.webhook_deliveries, 1);
      assert.deepEqual((await db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', 'we_sweep').execute()).map((r) => r.id), ['wd_pending']);
    });

    it('several processes sweeping at once while events are written: each partition made once, no sweep or write fails', async () => {
      const now = utc(2034, 7, 14, 12);
      const user = await createUser(t);
      const { appId } = await issueAccessToken(t, user, ['read_profile'], 3600);
      const processes = [0, 1, 2].map(() => openDatabase(POSTGRES_URL!, { schema: t.database.schema!, poolSize: 3 }));
      try {
        let writing = true;
        const written: string[] = [];
        const writer = (async () => {
          for (let i = 0; writing || i < 20; i++) {
            written.push(...(await insertEventRows(processes[i % 3]!.kysely, [{ app_id: appId, type: 'steps.updated', user_id: user.id, data: { i }, created_at: now + (i % 8) * DAY }])));
          }
        })();
        const settled = await Promise.allSettled(processes.map((process) => sweepExpired(process.kysely, 'postgres', now, now - 30 * DAY)));
        writing = false;
        await writer;
        const sweeps = settled.map((sweep) => {
          if (sweep.status === 'rejected') throw sweep.reason;
          return sweep.value;
        });
        const made = sweeps.flatMap((sweep) => sweep.partitions.made);
        assert.equal(new Set(made).size, made.length, `made twice: ${made.join(', ')}`);
        // Whatever one process skipped while another held the work, the next sweep makes.
        await sweepExpired(t.database.db.kysely, 'postgres', now, now - 30 * DAY);
        const events = await partitionsOf(t.database.db.kysely, 'events');
        for (let day = 14; day <= 21; day++) assert.ok(events.includes(`events_2034_07_${day}`), `events_2034_07_${day}`);
        const stored = await eventRows(t.database.db.kysely, { appId });
        assert.deepEqual(stored.map((row) => row.id).sort(), [...written].sort());
      } finally {
        await Promise.all(processes.map((process) => process.close()));
      }
    });

    it('a write for a month no partition covers lands in the DEFAULT one, and moves when its month is made', async () => {
      const db = t.database.db.kysely;
      const { user, token } = await userWithToken(t);
      const old = utc(2012, 5, 3);
      await upload(t, token, 'steps', [{ start_time: old + 3600, value: 17 }]);
      assert.deepEqual([...new Set(await homes('series_days', sql`user_id = ${user.id}`))], ['series_days_default'], 'steps and the distance they derive');
      const { ensurePartition, partitioned } = await import('../../../src/db/partitions.js');
      assert.equal(await ensurePartition(db, partitioned('series_days'), old), true);
      assert.deepEqual([...new Set(await homes('series_days', sql`user_id = ${user.id}`))], ['series_days_2012_05']);
      const series = await readMetric(t, token, 'steps', { start_time: old, end_time: old + DAY, granularity: 'day', timezone: 'UTC' });
      assert.equal(series.total, 17);
    });

    it('a 30-day read of day rows touches at most two monthly partitions, and a read across a month end answers both months', async () => {
      const db = t.database.db.kysely;
      t.clock.set(utc(2031, 6, 1));
      await sweepExpired(db, 'postgres', utc(2031, 3, 1), utc(2031, 3, 1) - 30 * DAY);
      await sweepExpired(db, 'postgres', utc(2031, 5, 1), utc(2031, 5, 1) - 30 * DAY);
      const { user, token } = await userWithToken(t);
      // A sample a day from March 20 to May 10: three months' partitions hold them.
      const samples = [];
      for (let at = utc(2031, 3, 20, 9); at < utc(2031, 5, 10); at += DAY) samples.push({ start_time: at, value: new Date(at * 1000).getUTCDate() });
      await upload(t, token, 'steps', samples);
      assert.deepEqual([...new Set(await homes('series_days', sql`user_id = ${user.id}`))], ['series_days_2031_03', 'series_days_2031_04', 'series_days_2031_05']);

      const from = utc(2031, 3, 25);
      const plan = await sql<{ 'QUERY PLAN': string }>`explain select * from series_days
        where user_id = ${user.id} and metric = 'steps' and day_start >= ${from} and day_start < ${from + 30 * DAY}`.execute(db);
      const touched = new Set(plan.rows.flatMap((row) => [...row['QUERY PLAN'].matchAll(/ on (series_days_\w+)/g)].map((m) => m[1])));
      assert.deepEqual([...touched].sort(), ['series_days_2031_03', 'series_days_2031_04'], plan.rows.map((r) => r['QUERY PLAN']).join('\n'));

      // The server's reader (store/postgres/series-days.ts): a lateral range per wanted series, pruned as it runs.
      const analyzed = await sql<{ 'QUERY PLAN': string }>`explain (analyze, costs off, timing off) select s.day_start, s.total
        from unnest(${[user.id]}::text[], ${['steps']}::text[], ${[from]}::bigint[], ${[from + 30 * DAY]}::bigint[]) with ordinality as k(user_id, metric, day_from, day_to, i)
        cross join lateral (select * from series_days d where d.user_id = k.user_id and d.metric = k.metric and d.day_start >= k.day_from and d.day_start < k.day_to offset 0) s`.execute(db);
      const scanned = analyzed.rows.map((r) => r['QUERY PLAN']).filter((line) => / on series_days_\w+/.test(line) && !line.includes('never executed'));
      assert.ok(scanned.length >= 1 && scanned.length <= 2, analyzed.rows.map((r) => r['QUERY PLAN']).join('\n'));
      const series = await readMetric(t, token, 'steps', { start_time: from, end_time: from + 30 * DAY, granularity: 'day', timezone: 'UTC' });
      const expected = samples.filter((s) => s.start_time >= from && s.start_time < from + 30 * DAY).reduce((sum, s) => sum + s.value, 0);
      assert.equal(series.total, expected);

      // Across April's end, in a zone whose local days straddle the UTC months.
      const start = utc(2031, 4, 25);
      const end = utc(2031, 5, 6);
      const across = await readMetric(t, token, 'steps', { start_time: start, end_time: end, granularity: 'day', timezone: 'UTC' });
      assert.equal(across.total, samples.filter((s) => s.start_time >= start && s.start_time < end).reduce((sum, s) => sum + s.value, 0));
      assert.equal(across.buckets.filter((b) => b.value > 0).length, 11);
      assert.deepEqual(across.buckets.find((b) => b.start_time === utc(2031, 4, 30))?.value, 30);
      assert.deepEqual(across.buckets.find((b) => b.start_time === utc(2031, 5, 1))?.value, 1);
    });
  });
}
