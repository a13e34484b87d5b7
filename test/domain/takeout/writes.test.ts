/**
 * What an import writes to hold what it imports (docs/takeout.md, "What an import writes"): each
 * day row of the series once, although a step is a local date and a row a UTC day (steps sharing
 * a row are written together); and, while it runs, one row of waiting changes per date it touched
 * rather than one per step — so that once it ends, a SQLite file keeps no more free pages than
 * those few rows took.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow, ValueListNode, ValueNode, ValuesNode } from 'kysely';
import type { Db } from '../../../src/db/database.js';
import { archiveLimits, importOf, previewImport, startImport } from '../../../src/domain/takeout/imports.js';
import { claimAndRun } from '../../../src/domain/takeout/runner.js';
import { createStores } from '../../../src/store/stores.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { eventRows } from '../../support/events.js';
import { forEachDialect } from '../../support/databases.js';
import { cheapPasswordHashing } from '../../support/passwords.js';
import { datesFrom, expectedEvents, takeoutHistory, writeTakeoutZip, type History, type ToldChange } from '../../support/takeout-archive.js';
import { asRead, everythingRead } from '../../support/takeout-reads.js';
import { ALL_RESOURCE_SCOPES, issueAccessToken } from '../../support/tokens.js';
import { newAccount } from '../../web/pages-support.js';

cheapPasswordHashing();

const folder = mkdtempSync(join(tmpdir(), 'stride-takeout-writes-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** Counts the rows each INSERT into series_days writes (an upsert: inserted or updated), per metric and day. */
class DayRowWrites implements KyselyPlugin {
  readonly writes = new Map<string, number>();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'series_days' && node.values?.kind === 'ValuesNode') {
      const columns = (node.columns ?? []).map((column) => column.column.name);
      for (const row of (node.values as ValuesNode).values) {
        const values: unknown[] = row.kind === 'PrimitiveValueListNode' ? [...row.values] : (row as ValueListNode).values.map((value: OperationNode) => (value as ValueNode).value);
        const key = `${String(values[columns.indexOf('metric')])} ${String(values[columns.indexOf('day_start')])}`;
        this.writes.set(key, (this.writes.get(key) ?? 0) + 1);
      }
    }
    return node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

forEachDialect('what a Takeout import writes', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  const settings = (extra: { shouldStop?: () => boolean; onProgress?: (at: { filesDone: number }) => void } = {}) => ({
    leaseSeconds: 30,
    coalesceSeconds: 0,
    limits: archiveLimits(t.config.takeout.maxArchiveBytes),
    clock: t.clock,
    ...extra,
  });

  async function archiveOf(name: string, history: History) {
    const { files, expected } = takeoutHistory(history);
    const path = join(folder, `${name}.zip`);
    await writeTakeoutZip(path, files);
    return { path, expected, files: files.length };
  }

  it('writes each day row once, though neighbouring dates of a file share UTC days; what it holds and tells is the archive\'s', async () => {
    // A person of Europe/Berlin: a date's heart rate comes from two files (UTC days), noted by two writes.
    const person = { ...(await newAccount(t, 'Rows once')), timezone: 'Europe/Berlin' };
    await t.database.db.kysely.updateTable('users').set({ timezone: person.timezone }).where('id', '=', person.id).execute();
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    // Minutes around the clock in Europe/Berlin: every local date's first hour is the UTC day before.
    const history: History = { zone: 'Europe/Berlin', dates: datesFrom('2024-01-10', 4), heartRateEvery: 60, waking: [0, 24], seed: 5 };
    const { path, expected } = await archiveOf('rows-once', history);
    const counter = new DayRowWrites();
    const counted = { ...t.database.db, kysely: t.database.db.kysely.withPlugin(counter) } as Db;
    const stores = createStores(counted);
    const limits = archiveLimits(t.config.takeout.maxArchiveBytes);
    const previewed = await previewImport(stores, person, { path, name: 'takeout.zip', ownedByServer: false }, limits, t.clock());
    assert.ok('queued' in (await startImport(stores, person.id, previewed.id, t.clock())));
    assert.equal(await claimAndRun(stores, 'runner', settings(), previewed.id), 'finished');
    assert.equal((await importOf(stores, person.id, previewed.id))!.state, 'done');

    const rows = await t.database.db.kysely.selectFrom('series_days').select(['metric', 'day_start']).where('user_id', '=', person.id).execute();
    const once = Object.fromEntries(rows.map((row) => [`${row.metric} ${Number(row.day_start)}`, row.metric === 'distance' ? 2 : 1]));
    // Distance twice: its sums from the steps, then the archive's minutes, as uploads of both write it.
    assert.deepEqual(Object.fromEntries(counter.writes), once);
    assert.equal(rows.filter((row) => row.metric === 'steps').length, 5, 'four local dates of steps in five UTC days');

    assert.deepEqual(await everythingRead(t, app.token, expected, 'Europe/Berlin', history.dates), asRead(expected));
    const events = (await eventRows(t.database.db.kysely, { appId: app.appId })).filter((event) => event.type !== 'grant.created');
    const told = Object.fromEntries(events.map((event) => [event.type, JSON.parse(event.data) as ToldChange & { user_id?: string }]));
    for (const change of Object.values(told)) delete change.user_id;
    assert.deepEqual(told, expectedEvents(expected, 'Europe/Berlin'));
  });

  it('waits on one row per date it touched, however many steps touched it; a SQLite file keeps no more free pages than those rows took', async () => {
    const person = await newAccount(t, 'Dates');
    const history: History = { zone: 'Europe/Berlin', dates: datesFrom('2024-02-01', 60), heartRateEvery: 300, seed: 7 };
    const { path } = await archiveOf('dates', history);
    const limits = archiveLimits(t.config.takeout.maxArchiveBytes);
    const freePages = () => (dialect === 'sqlite' ? (t.database.db.sqlite!.pragma('freelist_count', { simple: true }) as number) : 0);
    const freeBefore = freePages();
    const previewed = await previewImport(t.database.stores, person, { path, name: 'takeout.zip', ownedByServer: false }, limits, t.clock());
    assert.ok('queued' in (await startImport(t.database.stores, person.id, previewed.id, t.clock())));
    // Stop once the minute kinds are in: 3 files of minutes (steps, distance, calories) of 30 dates each, 60 of heart rate.
    let files = 0;
    const minuteFiles = 3 * 2 + 60;
    assert.equal(await claimAndRun(t.database.stores, 'first', settings({ onProgress: () => files++, shouldStop: () => files >= minuteFiles }), previewed.id), 'stopped');
    const waiting = await t.database.db.kysely.selectFrom('takeout_import_dates').select(['day', 'types']).where('import_id', '=', previewed.id).execute();
    // The person's zone is UTC; the steps of a heart-rate file (a UTC day) are its two Berlin dates.
    assert.equal(waiting.length, 60, 'a row per date, not per step');
    assert.ok(waiting.every((row) => Number(row.types) === 15), 'steps, distance, calories and heart rate noted in each');

    assert.equal(await claimAndRun(t.database.stores, 'second', settings(), previewed.id), 'finished');
    assert.deepEqual(await t.database.db.kysely.selectFrom('takeout_import_dates').select('day').where('import_id', '=', previewed.id).execute(), []);
    // 60 small rows fit in two pages; a row per step and type (about 330 here) took about fifteen.
    assert.ok(freePages() - freeBefore <= 3, `${freePages() - freeBefore} pages freed by the import`);
  });
});
