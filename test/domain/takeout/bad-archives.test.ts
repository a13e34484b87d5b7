/**
 * Bad archives get a clear answer and cost nothing (src/domain/takeout/archive.ts, preview.ts,
 * read-files.ts): an archive that is not a zip, has no Fitbit folder, was cut short, names an entry
 * outside itself, would inflate like a zip bomb, or is larger than TAKEOUT_MAX_BYTES is refused
 * before anything is written, with the reason; a malformed file, values out of range, times in the
 * future or skipped by the clocks are reported by file and entry while the rest is imported.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { archiveLimits, ArchiveRefused, importOf, previewImport, startImport } from '../../../src/domain/takeout/imports.js';
import { claimAndRun } from '../../../src/domain/takeout/runner.js';
import type { User } from '../../../src/store/users.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { cheapPasswordHashing } from '../../support/passwords.js';
import { GLOBAL, profileCsv, writeTakeoutZip, type TakeoutFile } from '../../support/takeout-archive.js';
import { ALL_RESOURCE_SCOPES, issueAccessToken } from '../../support/tokens.js';
import { newAccount } from '../../web/pages-support.js';

cheapPasswordHashing();

const folder = mkdtempSync(join(tmpdir(), 'stride-takeout-bad-'));
after(() => rmSync(folder, { recursive: true, force: true }));
let count = 0;
const pathFor = (name: string) => join(folder, `${count++}-${name}`);

async function zipOf(files: Array<[string, string | Buffer]>): Promise<string> {
  const path = pathFor('takeout.zip');
  await writeTakeoutZip(path, files.map(([name, content]): TakeoutFile => ({ name, content: () => content })));
  return path;
}

const profile: [string, string] = ['Takeout/Fitbit/Your Profile/Profile.csv', profileCsv('UTC', 'METRIC')];
const stepsFile = (date: string, rows: unknown[]): [string, string] => [`${GLOBAL}/steps-${date}.json`, JSON.stringify(rows)];

forEachDialect('bad Takeout archives', (dialect) => {
  let t: TestApp;
  let person: User;
  before(async () => {
    t = await createTestApp(dialect);
    person = await newAccount(t, 'Careful');
  });
  after(() => t.close());

  const preview = (path: string, maxArchiveBytes = t.config.takeout.maxArchiveBytes) =>
    previewImport(t.database.stores, person, { path, name: 'takeout.zip', ownedByServer: false }, archiveLimits(maxArchiveBytes), t.clock());
  const refused = async (path: string, pattern: RegExp, maxArchiveBytes?: number) => {
    await assert.rejects(preview(path, maxArchiveBytes), (error: unknown) => error instanceof ArchiveRefused && pattern.test(error.message));
    assert.deepEqual(await t.database.stores.takeoutImports.list(person.id, 10), [], 'nothing recorded');
  };

  it('refuses a file that is not a zip, or one cut short', async () => {
    const text = pathFor('notes.zip');
    writeFileSync(text, 'this is not a zip archive\n'.repeat(100));
    await refused(text, /is not a zip archive, or it was cut short/);

    const whole = await zipOf([profile, stepsFile('2024-01-01', [{ dateTime: '01/01/24 08:00:00', value: '12' }])]);
    truncateSync(whole, Math.floor(readFileSync(whole).length / 2));
    await refused(whole, /is not a zip archive, or it was cut short/);
    await refused(pathFor('missing.zip'), /cannot be read \(ENOENT\)/);
  });

  it('refuses an archive with no Fitbit folder, or none of the files Stride imports', async () => {
    await refused(await zipOf([['Takeout/Mail/All mail.mbox', 'From: a@example.test\n']]), /holds no Fitbit folder/);
    await refused(await zipOf([['Takeout/Fitbit/Global Export Data/altitude-2024-01-01.json', '[]'], profile]), /holds no file Stride imports/);
  });

  it('refuses an entry whose name leaves the archive, without extracting anything', async () => {
    const path = await zipOf([profile, stepsFile('2024-01-01', []), ['Takeout/Fitbit/AAAAAAescape.json', '[]']]);
    const bytes = readFileSync(path);
    const patched = Buffer.from(bytes.toString('latin1').replaceAll('AAAAAA', '../../'), 'latin1');
    writeFileSync(path, patched);
    await refused(path, /holds an entry whose name leaves the archive, "Takeout\/Fitbit\/\.\.\/\.\.\/escape\.json"/);
  });

  it('refuses a zip bomb and an archive over TAKEOUT_MAX_BYTES before inflating anything', async () => {
    await refused(await zipOf([profile, stepsFile('2024-01-01', []), [`${GLOBAL}/heart_rate-2024-01-01.json`, Buffer.alloc(3 * 1024 * 1024, 0x20)]]), /heart_rate-2024-01-01\.json" inflates \d+ times .*a zip bomb/);
    const small = await zipOf([profile, stepsFile('2024-01-01', [])]);
    await refused(small, /more than the 100 bytes an archive may be \(TAKEOUT_MAX_BYTES\)/, 100);
    // Ten gigabytes on disk (a sparse file): refused by its size, never opened.
    const huge = pathFor('huge.zip');
    writeFileSync(huge, '');
    truncateSync(huge, 10 * 1024 ** 3);
    await refused(huge, /is 10 GiB, more than the 4\.0 GiB an archive may be/);
  });

  it('imports the rest of an archive and names every entry it skips: a malformed file, values out of range, future times, times the clocks skipped', async () => {
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const nextYear = new Date().getUTCFullYear() + 1 - 2000;
    const path = await zipOf([
      ['Takeout/Fitbit/Your Profile/Profile.csv', profileCsv('Europe/Berlin', 'METRIC')],
      stepsFile('2024-03-31', [
        { dateTime: '03/31/24 01:59:00', value: '10' },
        { dateTime: '03/31/24 02:30:00', value: '11' },
        { dateTime: '03/31/24 03:00:00', value: 5000 },
        { dateTime: '03/31/24 03:01:00', value: 'many' },
        { dateTime: `01/01/${nextYear} 08:00:00`, value: '3' },
        { dateTime: '2024-03-31 08:00', value: '3' },
        { dateTime: '03/31/24 09:00:00', value: '30' },
        { dateTime: '03/31/24 09:00:00', value: '31' },
      ]),
      [`${GLOBAL}/calories-2024-03-31.json`, '[{"dateTime": "03/31/24 09:00:00", "value": "1.5"'],
      [`${GLOBAL}/heart_rate-2024-03-31.json`, JSON.stringify([{ dateTime: '03/31/24 09:00:05', value: { bpm: 300, confidence: 1 } }, { dateTime: '03/31/24 09:00:10', value: { bpm: 80, confidence: 2 } }])],
      [`${GLOBAL}/weight-2024-03-31.json`, JSON.stringify([{ logId: 1, weight: 1000, bmi: 300, date: '03/31/24', time: '07:00:00', source: 'API' }, { logId: 2, weight: 70.5, bmi: 22, fat: 90, date: '03/31/24', time: '07:05:00', source: 'API' }])],
    ]);
    const previewed = await preview(path);
    assert.deepEqual(previewed.preview!.unreadable.map((entry) => entry.file), ['Fitbit/Global Export Data/calories-2024-03-31.json']);
    assert.ok('queued' in (await startImport(t.database.stores, person.id, previewed.id, t.clock())));
    const limits = archiveLimits(t.config.takeout.maxArchiveBytes);
    assert.equal(await claimAndRun(t.database.stores, 'runner', { leaseSeconds: 30, coalesceSeconds: 0, limits, clock: t.clock }, previewed.id), 'finished');
    const view = (await importOf(t.database.stores, person.id, previewed.id))!;
    assert.equal(view.state, 'done');

    const named = view.report.skipped.entries.map(({ file, entry, code }) => `${file.replace('Fitbit/Global Export Data/', '')}#${entry} ${code}`);
    assert.deepEqual(named.sort(), [
      'calories-2024-03-31.json#null malformed_file',
      'heart_rate-2024-03-31.json#0 out_of_range',
      'steps-2024-03-31.json#1 clock_gap',
      'steps-2024-03-31.json#2 out_of_range',
      'steps-2024-03-31.json#3 bad_value',
      'steps-2024-03-31.json#4 future',
      'steps-2024-03-31.json#5 bad_time',
      'steps-2024-03-31.json#7 repeated',
      'weight-2024-03-31.json#0 out_of_range',
      'weight-2024-03-31.json#1 out_of_range',
    ].sort());
    const reasons = Object.fromEntries(view.report.skipped.entries.map((entry) => [`${entry.file.split('/').at(-1)}#${entry.entry}`, entry.reason]));
    assert.match(reasons['steps-2024-03-31.json#1']!, /"03\/31\/24 02:30:00" does not exist in Europe\/Berlin \(the clocks went forward over it\)/);
    assert.match(reasons['steps-2024-03-31.json#2']!, /5000 steps in a minute/);
    assert.match(reasons['calories-2024-03-31.json#null']!, /is not valid JSON/);
    assert.match(reasons['weight-2024-03-31.json#0']!, /the weight 1000 kg is not from 20 to 400 kg/);

    const steps = await t.app.inject({ method: 'GET', url: '/v1/users/me/activities/steps/?start_time=1711843200&end_time=1711929600&granularity=day&timezone=Europe/Berlin', headers: { authorization: `Bearer ${app.token}` } });
    assert.equal(steps.json().total, 40, 'the good minutes are in: 10 at 01:59 and 30 at 09:00');
    const kinds = Object.fromEntries(view.report.kinds.map((kind) => [kind.kind, kind]));
    assert.equal(kinds.heartrate!.written, 1);
    assert.equal(kinds.weight!.written, 0);
  });

  it('fails an import whose archive was replaced on disk after its preview, and the runner goes on to the next', async () => {
    const path = await zipOf([profile, stepsFile('2024-01-01', [{ dateTime: '01/01/24 08:00:00', value: '12' }])]);
    const other = await newAccount(t, 'Replaced');
    const previewed = await previewImport(t.database.stores, other, { path, name: 'takeout.zip', ownedByServer: false }, archiveLimits(t.config.takeout.maxArchiveBytes), t.clock());
    assert.ok('queued' in (await startImport(t.database.stores, other.id, previewed.id, t.clock())));
    await writeTakeoutZip(path, [{ name: profile[0], content: () => profile[1] }, { name: `${GLOBAL}/steps-2024-01-02.json`, content: () => '[]' }]);
    const limits = archiveLimits(t.config.takeout.maxArchiveBytes);
    assert.equal(await claimAndRun(t.database.stores, 'runner', { leaseSeconds: 30, coalesceSeconds: 0, limits, clock: t.clock }, previewed.id), 'finished');
    const view = (await importOf(t.database.stores, other.id, previewed.id))!;
    assert.equal(view.state, 'failed');
    assert.match(view.error!, /no longer the one previewed/);
  });
});
