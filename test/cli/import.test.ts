/**
 * `stride import` (src/cli/commands.ts, src/cli/import.ts): a person's export taken back whole —
 * every kind, with the events the API records — and files of one kind as CSV or JSON lines; a bad
 * record refuses the whole file, named by its line or its place in the export, and nothing is
 * written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { User } from '../../src/store/users.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { runCliInProcess, expectCliFailure } from '../support/cli.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { dataOf, uploadEveryKind } from '../support/person-uploads.js';
import { ALL_RESOURCE_SCOPES, issueAccessToken } from '../support/tokens.js';
import { newAccount, signedIn } from '../web/pages-support.js';
import { eventRows } from '../support/events.js';

cheapPasswordHashing();

const files = mkdtempSync(join(tmpdir(), 'stride-import-'));
after(() => rmSync(files, { recursive: true, force: true }));
let fileCount = 0;
function file(text: string): string {
  const path = join(files, `file-${fileCount++}`);
  writeFileSync(path, text);
  return path;
}

forEachDialect('stride import', (dialect) => {
  let t: TestApp;
  let cli: (...args: string[]) => ReturnType<typeof runCliInProcess>;
  before(async () => {
    t = await createTestApp(dialect);
    cli = (...args) => runCliInProcess(args, { DATABASE_URL: t.database.url });
  });
  after(() => t.close());

  const exportOf = async (user: User) => {
    const response = await (await signedIn(t, user)).get('/account/export.json');
    assert.equal(response.status, 200);
    return response.json() as Record<string, unknown>;
  };
  /** Everything stored of the person, kind by kind, read through the stores. */
  const storedOf = async (userId: string) => {
    const { stores } = t.database;
    return {
      steps: await stores.steps.samplesAfter(userId, -1, 1e6),
      distance: await stores.distance.samplesAfter(userId, -1, 1e6),
      calories: await stores.calories.samplesAfter(userId, -1, 1e6),
      heartrate: await stores.heartRate.samplesAfter(userId, -1, 1e6),
      sleep: (await stores.sleep.sessionsAfter(userId, -1, 1e6)).map(({ start_time, end_time, stages }) => ({ start_time, end_time, stages })),
      weight: (await stores.bodyWeight.weightsAfter(userId, -1, 1e6)).map(({ time, kg_hundredths, fat_hundredths }) => ({ time, kg_hundredths, fat_hundredths })),
    };
  };
  const expectFailure = (args: string[], pattern: RegExp) => expectCliFailure(cli, args, pattern);

  it('takes a person\'s export back whole into another account, with the events the API records; again changes nothing', async () => {
    const from = await newAccount(t, 'Moving Out');
    const upload = await issueAccessToken(t, from, ALL_RESOURCE_SCOPES);
    await uploadEveryKind(t, upload.token, 12);
    const exported = await exportOf(from);
    const path = file(JSON.stringify(exported));

    const to = await newAccount(t, 'Moving In');
    const listening = await issueAccessToken(t, to, ALL_RESOURCE_SCOPES);
    const run = await cli('import', '--user', to.email.toUpperCase(), path, '--json');
    assert.equal(run.code, 0, run.stderr);
    const data = dataOf(exported);
    const counts = Object.fromEntries(Object.entries(data).map(([kind, list]) => [kind, list.length]));
    assert.deepEqual(JSON.parse(run.stdout), { user: to.email, imported: counts });
    assert.deepEqual(dataOf(await exportOf(to)), data, 'the new account exports what the old one did');

    const types = [...new Map((await eventRows(t.database.db.kysely, { appId: listening.appId })).map((row) => [row.type, { type: row.type }])).values()];
    assert.deepEqual(types.map((row) => row.type).sort(), ['body.updated', 'calories.updated', 'distance.updated', 'heartrate.updated', 'sleep.updated', 'steps.updated']);

    const text = await cli('import', '--user', to.email, path);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^imported for ${to.email}: ${counts.steps} minutes of steps, ${counts.distance} minutes of distance, .* ${counts.sleep} sleep sessions, ${counts.weight} weight measurements\\n$`));
    assert.deepEqual(dataOf(await exportOf(to)), data, 'minutes merge, sessions and weighings replace theirs');
  });

  it('imports each kind from CSV or JSON lines', async () => {
    const person = await newAccount(t, 'Kinds');
    const start = Math.floor(t.clock() / 86_400) * 86_400 - 2 * 86_400;
    const run = async (kind: string, text: string, option = '--kind') => {
      const result = await cli('import', '--user', person.email, option, kind, file(text), '--json');
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as { imported: Record<string, number>; readings?: number };
    };
    assert.deepEqual((await run('steps', `start_time,value\n${start},10\n\n# a comment\n${start + 60},20\n`)).imported, { steps: 2 });
    assert.deepEqual((await run('distance', `{"start_time":${start},"value":8}\n{"start_time":${start + 120},"value":2000}\n`, '--metric')).imported, { distance: 2 });
    assert.deepEqual((await run('calories', `"start_time","value"\n${start},1.5\n${start + 60},0\n`)).imported, { calories: 2 });
    const readings = await run('heartrate', `time,bpm\n${start + 5},60\n${start + 35},70\n${start + 50},71\n{"time":${start + 61},"bpm":90}\n`);
    assert.deepEqual(readings, { user: person.email, imported: { heartrate: 2 }, readings: 4 });
    const night = (from: number, minutes: number[]) => {
      const stages = [];
      let time = from;
      for (const [i, length] of minutes.entries()) {
        stages.push({ stage: ['light', 'deep', 'rem', 'awake'][i % 4], start_time: time, end_time: time + length * 60 });
        time += length * 60;
      }
      return { start_time: from, end_time: time, stages };
    };
    const sessions = [night(start - 3600, [30, 90, 45]), night(start + 23 * 3600, [60, 60, 60, 5, 100])];
    assert.deepEqual((await run('sleep', sessions.map((s) => JSON.stringify(s)).join('\n'))).imported, { sleep: 2 });
    assert.deepEqual((await run('weight', `time,kg,fat_percent\n${start + 25_000},74.25,21.5\n${start + 25_060},74.3,\n${start + 25_120},74\n`)).imported, { weight: 3 });

    assert.deepEqual(await storedOf(person.id), {
      steps: [{ start_time: start, value: 10 }, { start_time: start + 60, value: 20 }],
      distance: [{ start_time: start, value: 8 }, { start_time: start + 120, value: 2000 }],
      calories: [{ start_time: start, value: 1.5 }, { start_time: start + 60, value: 0 }],
      heartrate: [{ start_time: start, avg: 67, min: 60, max: 71 }, { start_time: start + 60, avg: 90, min: 90, max: 90 }],
      sleep: sessions,
      weight: [
        { time: start + 25_000, kg_hundredths: 7425, fat_hundredths: 2150 },
        { time: start + 25_060, kg_hundredths: 7430, fat_hundredths: null },
        { time: start + 25_120, kg_hundredths: 7400, fat_hundredths: null },
      ],
    });
  });

  it('refuses a file at its first bad record, naming it by line or place, and writes nothing of it', async () => {
    const person = await newAccount(t, 'Careful');
    const { token } = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    await uploadEveryKind(t, token, 2);
    const before = await storedOf(person.id);
    const stored = before.sleep[0]!;
    const now = t.clock();
    const minute = Math.floor(now / 60) * 60 - 86_400;
    const kind = (kind: string, text: string, pattern: RegExp) => expectFailure(['import', '--user', person.email, '--kind', kind, file(text)], pattern);

    await kind('distance', `start_time,value\n${minute},5\n${minute + 60},2001\n`, /: line 3: value must be <= 2000; nothing was imported$/m);
    await kind('distance', `${minute},5\n${minute},6\n`, /: line 2: start_time repeats the minute of line 1; one record per minute; nothing was imported$/m);
    await kind('distance', `${minute + 30},5\n`, /: line 1: start_time must be a multiple of 60; nothing/m);
    await kind('calories', `${minute},1.25\n`, /: line 1: value must have at most one decimal; nothing/m);
    await kind('calories', `${minute},lots\n`, /: line 1: value must be number; nothing/m);
    await kind('steps', `${minute},10,3\n`, /: line 1: must be start_time,value; nothing/m);
    await kind('heartrate', `time,bpm\n${now},60\n${now + 1},300\n`, /: line 3: bpm must be <= 250; nothing/m);
    await kind('heartrate', `${now + 2 * 86_400},60\n`, /: line 1: time is more than a day ahead of the server's clock; nothing/m);
    await kind('heartrate', `{"time":${now},"bpm":60,"spo2":97}\n`, /: line 1: spo2 is not a known field; nothing/m);
    await kind('weight', `${now},70.123\n`, /: line 1: kg must have at most two decimals, got 70.123; nothing/m);
    await kind('weight', `${now - 60},70\n${now - 60},71\n`, /: line 2: time repeats the time of line 1; one record per time; nothing/m);
    await kind('weight', `{oops\n`, /: line 1: is not valid JSON; nothing/m);
    await kind('sleep', `${now},${now + 60}\n`, /: line 1: must be a JSON object \(sleep sessions are JSON lines, one session a line\); nothing/m);
    const gap = { start_time: now - 7200, end_time: now - 3600, stages: [{ stage: 'light', start_time: now - 7200, end_time: now - 5400 }, { stage: 'deep', start_time: now - 5000, end_time: now - 3600 }] };
    await kind('sleep', JSON.stringify(gap), new RegExp(`: line 1: stages/1/start_time ${now - 5000} must equal stages/0/end_time ${now - 5400}: stages are contiguous; nothing`, 'm'));
    const snooze = { start_time: now - 7200, end_time: now - 3600, stages: [{ stage: 'snooze', start_time: now - 7200, end_time: now - 3600 }] };
    await kind('sleep', JSON.stringify(snooze), /: line 1: stages\/0\/stage must be one of awake, light, deep, rem; nothing/m);
    const nap = (from: number) => JSON.stringify({ start_time: from, end_time: from + 1800, stages: [{ stage: 'light', start_time: from, end_time: from + 1800 }] });
    await kind('sleep', `${nap(now - 9000)}\n\n${nap(now - 8000)}\n`, /: line 3: the session overlaps the session of line 1; one session at a time; nothing/m);
    await kind('sleep', nap(stored.start_time + 60), new RegExp(`: line 1 overlaps the stored session slp_[^ ]+ \\(start_time ${stored.start_time}, end_time ${stored.end_time}\\); nothing was imported$`, 'm'));

    // An export with a bad weighing: its good steps are not written either.
    const good = { steps: [{ start_time: minute, value: 77 }] };
    const exportFile = (data: object) => file(JSON.stringify({ exported_at: 'now', email: person.email, ...good, ...data }));
    await expectFailure(['import', '--user', person.email, exportFile({ weight: [{ time: now - 60, kg: 70 }, { time: now - 120, kg: 500 }] })], /: weight\/1\/kg must be <= 400; nothing was imported$/m);
    await expectFailure(['import', '--user', person.email, exportFile({ weight: [{ time: now - 60, kg: 70.555, fat_percent: null }] })], /: weight\/0\/kg must have at most two decimals, got 70.555; nothing/m);
    await expectFailure(['import', '--user', person.email, exportFile({ heartrate: [{ start_time: minute, avg: 80, min: 85, max: 90 }] })], /: heartrate\/0\/min 85 must not be above heartrate\/0\/avg 80; nothing/m);
    await expectFailure(['import', '--user', person.email, exportFile({ steps: [{ start_time: minute, value: 1001 }] })], /: steps\/0: value must be an integer from 0 to 1000; nothing/m);
    await expectFailure(['import', '--user', person.email, exportFile({ calories: {} })], /: calories must be an array; nothing/m);
    await expectFailure(['import', '--user', person.email, exportFile({ sleep: [JSON.parse(nap(stored.start_time - 600))] })], /: sleep\/0 overlaps the stored session slp_/m);
    await expectFailure(['import', '--user', person.email, file('start_time,value\n1,2\n')], /: is not an export of Stride \(not JSON\); give --kind for a CSV or JSON lines file; nothing/m);
    await expectFailure(['import', '--user', person.email, file('{"email":"x"}')], /: holds none of steps, distance, calories, heartrate, sleep, weight; nothing/m);
    await expectFailure(['import', '--user', person.email, '--kind', 'naps', file('')], /--kind must be one of steps, distance, calories, heartrate, sleep, weight$/m);
    await expectFailure(['import', '--user', 'nobody@example.com', file(JSON.stringify(good))], /no user with email nobody@example.com/);

    assert.deepEqual(await storedOf(person.id), before, 'nothing of a refused file was written');
  });
});
