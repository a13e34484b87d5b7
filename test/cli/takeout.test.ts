/**
 * `stride import --takeout FILE --user EMAIL` (src/cli/takeout.ts): a generated archive imported by
 * the command, with its progress on standard error and its report on standard output (text, or
 * the import as JSON with --json); a bad archive refused in one line with exit 1; and a command
 * killed part-way, run again, carrying the same import on to what an uninterrupted one gives.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { ImportView } from '../../src/domain/takeout/imports.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { CLI_PATH, expectCliFailure, runCliInProcess } from '../support/cli.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { datesFrom, takeoutHistory, writeTakeoutZip } from '../support/takeout-archive.js';
import { asRead, everythingRead } from '../support/takeout-reads.js';
import { ALL_RESOURCE_SCOPES, issueAccessToken } from '../support/tokens.js';
import { newAccount } from '../web/pages-support.js';

cheapPasswordHashing();

const folder = mkdtempSync(join(tmpdir(), 'stride-takeout-cli-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** Runs the installed command in a child process and kills it once its standard error shows `killAt`; resolves with what it wrote. */
function killedWhen(args: string[], env: Record<string, string>, killAt: RegExp): Promise<{ stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
      if (!killed && killAt.test(stderr)) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('exit', () => resolve({ stderr, killed }));
  });
}

forEachDialect('stride import --takeout', (dialect) => {
  let t: TestApp;
  let cli: (...args: string[]) => ReturnType<typeof runCliInProcess>;
  let archive: string;
  let expected: ReturnType<typeof takeoutHistory>['expected'];
  const dates = datesFrom('2024-10-20', 12);
  before(async () => {
    t = await createTestApp(dialect);
    cli = (...args) => runCliInProcess(args, { DATABASE_URL: t.database.url, TAKEOUT_LEASE: '1' });
    const history = takeoutHistory({ zone: 'Europe/Berlin', dates, heartRateEvery: 5 });
    expected = history.expected;
    archive = join(folder, `takeout-${dialect}.zip`);
    await writeTakeoutZip(archive, history.files);
  });
  after(() => t.close());

  it('imports an archive with progress on standard error and the import as JSON on standard output; --json off prints the report', async () => {
    const person = await newAccount(t, 'Command');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const run = await cli('import', '--takeout', archive, '--user', person.email, '--json');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^stride: importing steps: 1 of 18 files \(5 %\)$/m);
    assert.match(run.stderr, /^stride: importing weight: 17 of 18 files \(94 %\)$/m);
    const view = JSON.parse(run.stdout) as ImportView;
    assert.equal(view.state, 'done');
    assert.equal(view.progress.percent, 100);
    assert.deepEqual(await everythingRead(t, app.token, expected, 'Europe/Berlin', dates), asRead(expected));

    const again = await cli('import', '--takeout', archive, '--user', person.email);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^import imp_\S+ of takeout-\w+\.zip: done$/m);
    assert.match(again.stdout, /^ {2}heart rate {10}12 file\(s\), \d+ entries: 0 day\(s\) imported; 0 written, \d+ already held \(kept\), 0 skipped$/m);
    assert.match(again.stdout, /resting heart rate .*read, not stored/);
    assert.match(again.stdout, /not read \(Stride does not hold these\): altitude \(1\), Sleep Score \(1\)/);
  });

  it('refuses a bad archive in one line, exit 1, nothing printed on standard output', async () => {
    const person = await newAccount(t, 'Refused');
    const notZip = join(folder, 'not-a-zip.zip');
    writeFileSync(notZip, 'hello');
    await expectCliFailure(cli, ['import', '--takeout', notZip, '--user', person.email], /^stride: \S+not-a-zip\.zip is not a zip archive, or it was cut short .*; nothing was imported\n$/);
    await expectCliFailure(cli, ['import', '--takeout', archive, '--user', 'nobody@example.test'], /^stride: no user with email nobody@example\.test\n$/);
    await expectCliFailure(cli, ['import', '--takeout', archive, '--user', person.email, '--kind', 'steps'], /--takeout reads every kind the archive holds/);
    const big = await runCliInProcess(['import', '--takeout', archive, '--user', person.email], { DATABASE_URL: t.database.url, TAKEOUT_MAX_BYTES: '1000' });
    assert.equal(big.code, 1);
    assert.match(big.stderr, /more than the 1000 bytes an archive may be \(TAKEOUT_MAX_BYTES\)/);
  });

  it('killed part-way and run again, carries the same import on to what an uninterrupted import gives', async () => {
    const whole = await newAccount(t, 'Uninterrupted');
    const wholeApp = await issueAccessToken(t, whole, ALL_RESOURCE_SCOPES);
    const uninterrupted = await cli('import', '--takeout', archive, '--user', whole.email, '--json');
    assert.equal(uninterrupted.code, 0, uninterrupted.stderr);

    const person = await newAccount(t, 'Interrupted');
    const app = await issueAccessToken(t, person, ALL_RESOURCE_SCOPES);
    const env = { DATABASE_URL: t.database.url, TAKEOUT_LEASE: '1' };
    const first = await killedWhen(['import', '--takeout', archive, '--user', person.email], env, /importing heart rate: 5 of/);
    assert.ok(first.killed, first.stderr);
    const [left] = await t.database.stores.takeoutImports.list(person.id, 1);
    assert.equal(left!.state, 'running');
    assert.ok(left!.nextFile >= 5 && left!.nextFile < left!.filesTotal, `${left!.nextFile}`);

    const second = await cli('import', '--takeout', archive, '--user', person.email, '--json');
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, new RegExp(`carrying on the unfinished import ${left!.id}`));
    const resumed = JSON.parse(second.stdout) as ImportView;
    assert.equal(resumed.id, left!.id);
    assert.deepEqual(resumed.report, (JSON.parse(uninterrupted.stdout) as ImportView).report);
    assert.deepEqual(await everythingRead(t, app.token, expected, 'Europe/Berlin', dates), await everythingRead(t, wholeApp.token, expected, 'Europe/Berlin', dates));
  });
});
