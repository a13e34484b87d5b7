/**
 * No read sees another request's uncommitted rows (docs/decisions/0034-executor-per-dialect.md):
 * an upload whose transaction writes its day row and then fails, and a GET of that day issued in
 * the same event-loop turn while the transaction is open, on both databases. The upload runs the
 * store's real path (POST → minute series → the user's lock → the day row's insert); a Kysely
 * plugin holds its transaction open after the insert until the GET has answered, then fails it.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { STEPS, readSeries, utc, type Series } from '../api/steps-support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { storedStepDays } from '../support/series-days.js';
import { bearer, userWithToken } from '../support/tokens.js';

const DAY = utc(2024, 4, 2);

class UploadFailed extends Error {}

/**
 * Calls `whileOpen` right after the day row's insert answers, in the same turn, and fails that
 * statement — the upload's transaction then rolls back — once the promise it returns settles.
 */
function failAfterDayRowInsert(whileOpen: () => Promise<unknown>): KyselyPlugin {
  const dayRowInserts = new WeakSet<object>();
  return {
    transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
      if (node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'series_days') dayRowInserts.add(queryId);
      return node;
    },
    async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (!dayRowInserts.has(queryId)) return result;
      await whileOpen().catch(() => undefined);
      throw new UploadFailed('the upload fails after writing its day row');
    },
  };
}

const total = (series: Series) => series.steps.reduce((sum, bucket) => sum + bucket.value, 0);

forEachDialect('a read during another request’s open transaction', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
    t.clock.set(utc(2024, 6, 1));
  });
  after(() => t.close());

  it('a GET of a day never sees the day row of an upload that fails, before or after its rollback', async () => {
    const { user, token } = await userWithToken(t);
    const query = { start_time: DAY, end_time: DAY + 86_400, granularity: 'hour', timezone: 'UTC' };
    let during: Promise<Series> | undefined;
    const db = t.database.db;
    const plain = db.kysely;
    db.kysely = plain.withPlugin(
      failAfterDayRowInsert(() => {
        // Issued in the turn in which the insert answered, the upload's transaction open.
        during = readSeries(t, token, query);
        return during;
      }),
    );
    try {
      const upload = await t.app.inject({ method: 'POST', url: STEPS, headers: bearer(token), payload: { samples: [{ start_time: DAY + 600, value: 42 }] } });
      assert.ok(during, 'the GET was issued while the upload’s transaction was open');
      assert.equal(total(await during), 0, 'the GET answered while the transaction was open saw no uncommitted step');
      assert.equal(upload.statusCode, 500, upload.body);
    } finally {
      db.kysely = plain;
    }
    assert.equal(total(await readSeries(t, token, query)), 0, 'and after the rollback there is none either');
    assert.deepEqual(await storedStepDays(db.kysely, user.id), [], 'the day row was rolled back');
  });
});
