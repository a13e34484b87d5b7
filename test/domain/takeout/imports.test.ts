/**
 * Imports of Takeout archives (src/domain/takeout/): a generated archive previewed, started and run
 * by the runner, then every kind read back through /v1/… equal to the archive's values — local
 * times in Europe/Berlin across both changes of clocks and in Asia/Kolkata; imported twice (the
 * same data, nothing written the second time); over a device's data (the device's minutes and
 * nights kept, the overlap reported); answering other requests while it runs; stopped in the
 * middle and resumed (the same data and report as an uninterrupted import); cancelled; told to
 * apps once per kind; kept to its own person.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { archiveLimits, cancelImport, importOf, previewImport, startImport, type ImportView } from '../../../src/domain/takeout/imports.js';
import { claimAndRun } from '../../../src/domain/takeout/runner.js';
import type { User } from '../../../src/store/users.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { cheapPasswordHashing } from '../../support/passwords.js';
import { datesFrom, expectedEvents, takeoutHistory, writeTakeoutZip, type History, type ToldChange } from '../../support/takeout-archive.js';
import { asRead, everythingRead } from '../../support/takeout-reads.js';
import { ALL_RESOURCE_SCOPES, bearer, issueAccessToken } from '../../support/tokens.js';
import { newAccount } from '../../web/pages-support.js';
import { eventRows } from '../../support/events.js';

cheapPasswordHashing();

const folder = mkdtempSync(join(tmpdir(), 'stride-takeout-'));
after(() => rmSync(folder, { recursive: true, force: true }));
let archives = 0;

/** A generated archive on disk, and what importing it must give. */
async function archiveOf(history: History) {
  const { files, expected } = takeoutHistory(history);
  const path = join(folder, `takeout-${archives++}.zip`);
  await writeTakeoutZip(path, files);
  return { path, expected, dates: history.dates };
}

/** Both changes of clocks of 2024 in Europe/Berlin, with days around them. */
const BERLIN_DATES = [...datesFrom('2024-03-29', 4), ...datesFrom('2024-10-25', 4)];

forEachDialect('Takeout imports', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  const limits = () => archiveLimits(t.config.takeout.maxArchiveBytes);
  const settings = (extra: { shouldStop?: () => boolean; onProgress?: (at: { filesDone: number }) => void } = {}) => ({
    leaseSeconds: 30,
    coalesceSeconds: t.config.webhooks.coalesceSeconds,
    limits: limits(),
    clock: t.clock,
    ...extra,
  });

  /** Previews and starts an import of `path` for `user`; its id. */
  async function started(user: User, path: string): Promise<string> {
    const previewed = await previewImport(t.database.stores, user, { path, name: 'takeout.zip', ownedByServer: false }, limits(), t.clock());
    const outcome = await startImport(t.database.stores, user.id, previewed.id, t.clock());
    assert.ok('queued' in outcome, JSON.stringify(outcome));
    return previewed.id;
  }

  /** Imports `path` for `user` to its end through the runner's own call. */
  async function imported(user: User, path: string): Promise<ImportView> {
    const id = await started(user, path);
    assert.equal(await claimAndRun(t.database.stores, `runner-${id}`, settings(), id), 'finished');
    return (await importOf(t.database.stores, user.id, id))!;
  }

  const eventsOf = async (appId: string) =>
    (await eventRows(t.database.db.kysely, { appId })).map((row) => ({ type: row.type, data: JSON.parse(row.data) as ToldChange }));

  it('imports an archive of Europe/Berlin across both changes of clocks: /v1/… reads its values, apps hear once per kind', async () => {
    const person = await newAccount(t, 'Berlin');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const { path, expected, dates } = await archiveOf({ zone: 'Europe/Berlin', dates: BERLIN_DATES, heartRateEvery: 5 });

    // While it runs, the server answers others (the import yields between files and steps).
    let finished = false;
    const running = imported(person, path).finally(() => (finished = true));
    let answered = 0;
    while (!finished) {
      const profile = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(app.token) });
      assert.equal(profile.statusCode, 200);
      answered++;
    }
    assert.ok(answered >= 2, `${answered} answers during the import`);
    const view = await running;
    assert.equal(view.state, 'done', view.error ?? '');
    assert.deepEqual(await everythingRead(t, app.token, expected, 'Europe/Berlin', dates), asRead(expected));

    assert.equal(view.preview!.timezone.name, 'Europe/Berlin');
    assert.equal(view.preview!.timezone.from, 'archive');
    const kinds = Object.fromEntries(view.report.kinds.map((kind) => [kind.kind, kind]));
    for (const kind of ['steps', 'distance', 'calories', 'heartrate', 'sleep'] as const) {
      assert.equal(kinds[kind]!.days_imported, 8, kind);
      assert.equal(kinds[kind]!.first_date, '2024-03-29');
      assert.equal(kinds[kind]!.last_date, '2024-10-28');
    }
    assert.equal(kinds.heartrate!.entries, expected.readings);
    assert.equal(kinds.heartrate!.written, expected.heartrate.length);
    assert.equal(kinds.weight!.written, expected.weight.length);
    assert.equal(kinds.resting_heart_rate!.written, 0);
    assert.equal(kinds.resting_heart_rate!.entries, 8);
    assert.match(kinds.resting_heart_rate!.note!, /not stored/);
    assert.deepEqual(view.report.not_read, { altitude: 1, 'Sleep Score': 1 });
    assert.equal(view.report.skipped.total, 0, JSON.stringify(view.report.skipped.entries.slice(0, 3)));
    assert.deepEqual(view.progress, { files_done: 14, files_total: 14, percent: 100, kinds: view.progress.kinds });
    assert.ok(view.progress.kinds.every((kind) => kind.days_done === kind.days_total), JSON.stringify(view.progress.kinds));

    // One event per type, over every date written, a range per date covering its records (the person's zone is UTC).
    const events = await eventsOf(app.appId);
    const types = events.map((event) => event.type).filter((type) => type !== 'grant.created');
    assert.deepEqual([...types].sort(), ['body.updated', 'calories.updated', 'distance.updated', 'heartrate.updated', 'sleep.updated', 'steps.updated']);
    const steps = events.find((event) => event.type === 'steps.updated')!.data;
    assert.ok(steps.dates.includes('2024-03-31') && steps.dates.includes('2024-10-27'), steps.dates.join(' '));
    const told = Object.fromEntries(events.filter((event) => event.type !== 'grant.created').map(({ type, data: { dates, ranges } }) => [type, { dates, ...(ranges ? { ranges } : {}) }]));
    assert.deepEqual(told, expectedEvents(expected, 'UTC'));
  });

  it('reads local times in Asia/Kolkata (the person\'s zone, the archive naming none) and weights in pounds', async () => {
    const person = await newAccount(t, 'Kolkata');
    await t.database.db.kysely.updateTable('users').set({ timezone: 'Asia/Kolkata' }).where('id', '=', person.id).execute();
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const { path, expected, dates } = await archiveOf({ zone: 'Asia/Kolkata', dates: datesFrom('2024-06-01', 3), profileZone: null, weightUnit: 'lb', weighEvery: 1 });
    const view = await imported({ ...person, timezone: 'Asia/Kolkata' }, path);
    assert.equal(view.state, 'done', view.error ?? '');
    assert.deepEqual(view.preview!.timezone, { name: 'Asia/Kolkata', from: 'profile' });
    assert.deepEqual(view.preview!.weight_unit, { unit: 'lb', from: 'bmi' });
    assert.deepEqual(await everythingRead(t, app.token, expected, 'Asia/Kolkata', dates), asRead(expected));
  });

  it('imported twice holds the same data: the second import writes nothing, keeps everything and tells no app', async () => {
    const person = await newAccount(t, 'Twice');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const { path, expected, dates } = await archiveOf({ zone: 'Europe/Berlin', dates: datesFrom('2024-05-01', 3), seed: 3 });
    await imported(person, path);
    const once = await everythingRead(t, app.token, expected, 'Europe/Berlin', dates);
    const eventsOnce = (await eventsOf(app.appId)).length;

    const again = await imported(person, path);
    assert.equal(again.state, 'done');
    assert.deepEqual(await everythingRead(t, app.token, expected, 'Europe/Berlin', dates), once);
    for (const kind of again.report.kinds.filter((kind) => kind.kind !== 'resting_heart_rate')) {
      assert.equal(kind.written, 0, kind.kind);
      assert.equal(kind.days_imported, 0, kind.kind);
      assert.ok(kind.kept > 0, kind.kind);
    }
    assert.equal((await eventsOf(app.appId)).length, eventsOnce);
  });

  it('keeps a device\'s minutes and nights over the archive\'s, fills the rest, and reports the overlapping night', async () => {
    const person = await newAccount(t, 'Device');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const { path, expected, dates } = await archiveOf({ zone: 'UTC', dates: datesFrom('2024-07-01', 2), seed: 5 });
    const first = expected.steps[100]!;
    const device = { start_time: first.start_time, value: first.value + 1 };
    const night = expected.sleep[1]!;
    const deviceNight = { start_time: night.start_time + 600, end_time: night.start_time + 4200, stages: [{ stage: 'deep', start_time: night.start_time + 600, end_time: night.start_time + 4200 }] };
    for (const [url, payload] of [
      ['/v1/users/me/activities/steps/', { samples: [device] }],
      ['/v1/users/me/sleep/', deviceNight],
    ] as const) {
      const response = await t.app.inject({ method: 'POST', url, headers: bearer(app.token), payload });
      assert.equal(response.statusCode, 200, response.body);
    }
    const view = await imported(person, path);
    const read = await everythingRead(t, app.token, expected, 'UTC', dates);
    const wanted = asRead(expected);
    assert.deepEqual(read.steps, wanted.steps.map((minute) => (minute.start_time === device.start_time ? device : minute)));
    assert.deepEqual(read.sleep, wanted.sleep.map((session) => (session === night ? deviceNight : session)));
    const kinds = Object.fromEntries(view.report.kinds.map((kind) => [kind.kind, kind]));
    assert.equal(kinds.steps!.kept, 1);
    assert.equal(kinds.sleep!.skipped, 1);
    const overlap = view.report.skipped.entries.find((entry) => entry.code === 'sleep_overlap')!;
    assert.match(overlap.file, /^Fitbit\/Global Export Data\/sleep-2024-07-01\.json$/);
    assert.equal(overlap.entry, 1);
    assert.match(overlap.reason, /overlaps the stored session slp_/);
  });

  it('stopped after some files and resumed by another runner, gives what an uninterrupted import gives', async () => {
    const { path, expected, dates } = await archiveOf({ zone: 'Europe/Berlin', dates: datesFrom('2024-10-24', 5), seed: 9 });
    const whole = await newAccount(t, 'Whole');
    const wholeApp = await issueAccessToken(t, whole, ALL_RESOURCE_SCOPES);
    const uninterrupted = await imported(whole, path);

    const halves = await newAccount(t, 'Halves');
    const halvesApp = await issueAccessToken(t, halves, ALL_RESOURCE_SCOPES);
    const id = await started(halves, path);
    let files = 0;
    const stop = await claimAndRun(t.database.stores, 'first', settings({ onProgress: () => files++, shouldStop: () => files >= 4 }), id);
    assert.equal(stop, 'stopped');
    const midway = (await importOf(t.database.stores, halves.id, id))!;
    assert.equal(midway.state, 'running');
    assert.equal(midway.progress.files_done, 4);
    assert.equal(await claimAndRun(t.database.stores, 'second', settings(), id), 'finished');
    const resumed = (await importOf(t.database.stores, halves.id, id))!;

    assert.deepEqual(await everythingRead(t, halvesApp.token, expected, 'Europe/Berlin', dates), await everythingRead(t, wholeApp.token, expected, 'Europe/Berlin', dates));
    assert.deepEqual(resumed.report, uninterrupted.report);
    const typesOf = async (appId: string) => (await eventsOf(appId)).map((event) => event.type).sort();
    assert.deepEqual(await typesOf(halvesApp.appId), await typesOf(wholeApp.appId));
  });

  it('resumes part-way through a file exactly after the last step written', async () => {
    const { path, expected, dates } = await archiveOf({ zone: 'UTC', dates: datesFrom('2024-02-01', 4), heartRateEvery: null, seed: 11 });
    const whole = await newAccount(t, 'Whole steps');
    const uninterrupted = await imported(whole, path);
    const person = await newAccount(t, 'Part way');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const id = await started(person, path);
    // The first file (steps of 4 dates) is 4 steps: stop before the third (shouldStop is asked before each step).
    let asked = 0;
    assert.equal(await claimAndRun(t.database.stores, 'first', settings({ shouldStop: () => ++asked > 2 }), id), 'stopped');
    const midway = (await t.database.stores.takeoutImports.get(person.id, id))!;
    assert.deepEqual([midway.nextFile, midway.nextPart], [0, 2]);
    assert.equal(await claimAndRun(t.database.stores, 'second', settings(), id), 'finished');
    const resumed = (await importOf(t.database.stores, person.id, id))!;
    assert.deepEqual(resumed.report, uninterrupted.report);
    assert.deepEqual(await everythingRead(t, app.token, expected, 'UTC', dates), asRead(expected));
  });

  it('cancels: a running import stops at its next step, what it wrote stays and is reported, and apps hear of that', async () => {
    const person = await newAccount(t, 'Cancel');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const { path } = await archiveOf({ zone: 'UTC', dates: datesFrom('2024-08-01', 3), seed: 13 });
    const id = await started(person, path);
    let files = 0;
    const end = await claimAndRun(
      t.database.stores,
      'runner',
      settings({
        onProgress: () => {
          if (++files === 2) void cancelImport(t.database.stores, person.id, id, t.clock(), 0);
        },
      }),
      id,
    );
    assert.equal(end, 'finished');
    const view = (await importOf(t.database.stores, person.id, id))!;
    assert.equal(view.state, 'cancelled');
    assert.ok(view.progress.files_done >= 2 && view.progress.files_done < view.progress.files_total, JSON.stringify(view.progress));
    const steps = view.report.kinds.find((kind) => kind.kind === 'steps')!;
    assert.equal(steps.days_imported, 3);
    const types = (await eventsOf(app.appId)).map((event) => event.type);
    assert.ok(types.includes('steps.updated'), types.join(' '));
    assert.ok(!types.includes('sleep.updated'), 'sleep was never imported');

    // A previewed import is cancelled at once; a finished one stays as it ended.
    const previewed = await previewImport(t.database.stores, person, { path, name: 'again.zip', ownedByServer: false }, limits(), t.clock());
    assert.equal((await cancelImport(t.database.stores, person.id, previewed.id, t.clock(), 0))!.state, 'cancelled');
    assert.equal((await cancelImport(t.database.stores, person.id, id, t.clock(), 0))!.state, 'cancelled');
  });

  it('runs one import at a time per person, and a person can neither see nor cancel nor start another\'s', async () => {
    const owner = await newAccount(t, 'Owner');
    const other = await newAccount(t, 'Other');
    const { path } = await archiveOf({ zone: 'UTC', dates: datesFrom('2024-09-01', 1), seed: 17 });
    const id = await started(owner, path);
    const second = await previewImport(t.database.stores, owner, { path, name: 'second.zip', ownedByServer: false }, limits(), t.clock());
    const busy = await startImport(t.database.stores, owner.id, second.id, t.clock());
    assert.ok('refused' in busy && busy.status === 409 && busy.refused.includes(id), JSON.stringify(busy));

    assert.equal(await importOf(t.database.stores, other.id, id), null);
    assert.equal(await cancelImport(t.database.stores, other.id, id, t.clock(), 0), null);
    assert.deepEqual(await startImport(t.database.stores, other.id, second.id, t.clock()), { refused: 'no such import', status: 404 });
    assert.equal(await importOf(t.database.stores, other.id, 'imp_not-an-id'), null);
    assert.equal((await importOf(t.database.stores, owner.id, id))!.state, 'queued');
    assert.deepEqual((await t.database.stores.takeoutImports.list(other.id, 10)).length, 0);
  });
});
