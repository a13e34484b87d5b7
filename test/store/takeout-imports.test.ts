/**
 * The store of Takeout imports (src/store/takeout-imports.ts): one process holds an import's lease
 * at a time, another takes it over once it runs out, and a step of the process that lost it is
 * rolled back with its data; one import queued per person however many starts arrive at once; an
 * import's waiting changes become one event per type when it ends, once; a step reads and writes
 * as much at the end of a long import as at its start.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { ImportLeaseLost, noteImportStep, type ImportStep, type TakeoutPreview } from '../../src/store/takeout-imports.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { ALL_RESOURCE_SCOPES, createUser, issueAccessToken, type TestUser } from '../support/tokens.js';
import { eventRows } from '../support/events.js';

const PREVIEW: TakeoutPreview = {
  timezone: { name: 'UTC', from: 'profile' },
  weight_unit: { unit: 'kg', from: 'default' },
  kinds: { steps: { files: 1, entries: 2, days: 1, first_date: '2024-01-01', last_date: '2024-01-01' } },
  not_read: {},
  unreadable: [],
  files_total: 1,
};

/** Counts the statements run through it and the characters of the rows they return. */
class ReadCounter implements KyselyPlugin {
  statements = 0;
  charactersRead = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    for (const row of args.result.rows) for (const value of Object.values(row)) this.charactersRead += String(value).length;
    return args.result;
  }
}

forEachDialect('the store of Takeout imports', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  const newImport = async (user: TestUser, now: number) =>
    t.database.stores.takeoutImports.create({ userId: user.id, archivePath: '/tmp/takeout.zip', archiveName: 'takeout.zip', archiveBytes: 1000, archiveFingerprint: 'f', ownsArchive: false, timezone: 'UTC', preview: PREVIEW, now });

  const stepOf = (importId: string, owner: string, now: number): ImportStep => ({
    importId,
    leaseOwner: owner,
    leaseUntil: now + 30,
    now,
    position: { file: 1, part: 0 },
    kind: 'steps',
    endsFile: true,
    entries: 2,
    day: 19723,
    skipped: [],
  });
  const changeOf = (written: readonly number[]) => ({ dates: ['2024-01-01'], ranges: [{ start_time: written[0]!, end_time: written[written.length - 1]! + 60 }] });
  const samples = [{ start_time: 1704103200, value: 10 }, { start_time: 1704103260, value: 20 }];

  it('lets one process hold an import; another takes it once the lease ran out; the first one\'s next step is rolled back', async () => {
    const { takeoutImports, steps } = t.database.stores;
    const user = await createUser(t);
    const now = t.clock();
    const imported = await newImport(user, now);
    assert.ok('started' in (await takeoutImports.start(user.id, imported.id, now)));
    assert.equal((await takeoutImports.claim('a', now, now + 30, imported.id))?.id, imported.id);
    assert.equal(await takeoutImports.claim('b', now + 10, now + 40, imported.id), null, 'held by a');
    const taken = await takeoutImports.claim('b', now + 31, now + 61, imported.id);
    assert.equal(taken?.leaseOwner, 'b');

    await assert.rejects(steps.fillSamples(user.id, [{ records: samples, step: stepOf(imported.id, 'a', now + 32) }], changeOf), ImportLeaseLost);
    assert.deepEqual(await steps.samplesAfter(user.id, 0, 10), [], 'the step of the process that lost the lease wrote nothing');

    assert.deepEqual(await steps.fillSamples(user.id, [{ records: samples, step: stepOf(imported.id, 'b', now + 33) }], changeOf), [{ written: 2, kept: 0 }]);
    const after = (await takeoutImports.get(user.id, imported.id))!;
    assert.deepEqual([after.nextFile, after.nextPart, after.leaseUntil], [1, 0, now + 63]);
    assert.deepEqual(after.report.kinds.steps, { files: 1, entries: 2, written: 2, kept: 0, skipped: 0, days_written: [[19723, 19724]], days_read: [[19723, 19724]] });
  });

  it('queues one import per person however many starts arrive at once', async () => {
    const user = await createUser(t);
    const now = t.clock();
    const imports = await Promise.all([1, 2, 3, 4].map(() => newImport(user, now)));
    const outcomes = await Promise.all(imports.map((imported) => t.database.stores.takeoutImports.start(user.id, imported.id, now)));
    assert.equal(outcomes.filter((outcome) => 'started' in outcome).length, 1);
    assert.equal(outcomes.filter((outcome) => 'busy' in outcome).length, 3);
  });

  it('tells the changes of an import once, one event per type, when it ends; a process that does not hold it cannot end it', async () => {
    const { takeoutImports, steps } = t.database.stores;
    const user = await createUser(t);
    const app = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES);
    const now = t.clock();
    const imported = await newImport(user, now);
    await takeoutImports.start(user.id, imported.id, now);
    await takeoutImports.claim('a', now, now + 30, imported.id);
    await steps.fillSamples(user.id, [{ records: samples, step: stepOf(imported.id, 'a', now) }], changeOf);
    await steps.fillSamples(user.id, [{ records: samples, step: stepOf(imported.id, 'a', now) }], changeOf);
    const types = async () => (await eventRows(t.database.db.kysely, { appId: app.appId })).map((row) => row.type).sort();
    assert.deepEqual(await types(), [], 'nothing told while it runs');
    assert.equal(await takeoutImports.finish(imported.id, 'b', 'done', null, now, 0), false);
    assert.equal(await takeoutImports.finish(imported.id, 'a', 'done', null, now, 0), true);
    assert.equal(await takeoutImports.finish(imported.id, 'a', 'done', null, now, 0), false, 'ended once');
    assert.deepEqual(await types(), ['distance.updated', 'steps.updated']);
    const ended = (await takeoutImports.get(user.id, imported.id))!;
    assert.equal(ended.state, 'done');
    assert.equal(ended.leaseOwner, null);
    assert.equal(ended.report.kinds.steps!.kept, 2, 'the second write of the same minutes kept them');
  });

  it('notes a step with as many statements and as much read at its 300th step as at its first, and tells every step\'s change at the end', async () => {
    const { takeoutImports } = t.database.stores;
    const user = await createUser(t);
    const app = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES);
    const now = t.clock();
    const imported = await newImport(user, now);
    await takeoutImports.start(user.id, imported.id, now);
    await takeoutImports.claim('a', now, now + 30, imported.id);
    const FIRST_DAY = 19723;
    const STEPS = 300;
    const costs: Array<{ statements: number; charactersRead: number }> = [];
    for (let i = 0; i < STEPS; i++) {
      const day = FIRST_DAY + i;
      const date = new Date(day * 86_400_000).toISOString().slice(0, 10);
      const start = day * 86_400 + 3600;
      const step: ImportStep = { ...stepOf(imported.id, 'a', now), position: { file: i + 1, part: 0 }, day };
      const counter = new ReadCounter();
      const changes = { 'steps.updated': { dates: [date], ranges: [{ start_time: start, end_time: start + 600 }] }, 'heartrate.updated': { dates: [date] } };
      await t.database.db.kysely.transaction().execute((trx) => noteImportStep(trx.withPlugin(counter), step, { written: 10, kept: 0, changes }));
      costs.push({ statements: counter.statements, charactersRead: counter.charactersRead });
    }
    const [second, last] = [costs[1]!, costs[STEPS - 1]!];
    const seen = JSON.stringify([costs[0], second, last]);
    assert.equal(last.statements, second.statements, `as many statements: ${seen}`);
    // The report's counts gain digits (2 entries, then 600), nothing more.
    assert.ok(last.charactersRead - second.charactersRead < 20, `as much read: ${seen}`);

    assert.equal(await takeoutImports.finish(imported.id, 'a', 'done', null, now, 0), true);
    const told = (await eventRows(t.database.db.kysely, { appId: app.appId })).sort((a, b) => (a.type < b.type ? -1 : 1));
    assert.deepEqual(told.map((event) => event.type), ['heartrate.updated', 'steps.updated']);
    const steps = JSON.parse(told[1]!.data) as { dates: string[]; ranges: Array<{ start_time: number; end_time: number }> };
    assert.equal(steps.dates.length, STEPS);
    assert.equal(steps.dates[0], '2024-01-01');
    assert.deepEqual(steps.ranges[STEPS - 1], { start_time: (FIRST_DAY + STEPS - 1) * 86_400 + 3600, end_time: (FIRST_DAY + STEPS - 1) * 86_400 + 4200 });
    assert.equal((JSON.parse(told[0]!.data) as { dates: string[] }).dates.length, STEPS);
    const left = await t.database.db.kysely.selectFrom('takeout_import_dates').select('day').where('import_id', '=', imported.id).execute();
    assert.deepEqual(left, [], 'the told changes are forgotten');
  });
});
