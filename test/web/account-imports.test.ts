/**
 * "Bring your Fitbit history" on the account page (src/web/pages/account-imports.ts): a generated
 * Takeout archive uploaded through the real multipart form, previewed, confirmed, run by the
 * runner's own call, and reported; a file that is not a zip refused with its reason and removed;
 * an upload over the size limit refused and removed; a discard, a cancel before the start and one
 * while a runner holds the import (its progress and time left shown first); a second start refused
 * while one is queued; another person's import and a malformed id are 404; forms without their
 * CSRF token are 403.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { claimAndRun } from '../../src/domain/takeout/runner.js';
import { archiveLimits } from '../../src/domain/takeout/imports.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { datesFrom, takeoutHistory, writeTakeoutZip } from '../support/takeout-archive.js';
import type { Browser } from '../oauth/flow.js';
import { formFields } from '../oauth/flow.js';
import { newAccount, signedIn, textOf } from './pages-support.js';

cheapPasswordHashing();

const folder = mkdtempSync(join(tmpdir(), 'stride-account-imports-'));
after(() => rmSync(folder, { recursive: true, force: true }));
let made = 0;

/** A generated archive's bytes: a week of steps, heart rate, sleep and weight in Europe/Berlin. */
async function archiveBytes(): Promise<Buffer> {
  const { files } = takeoutHistory({ zone: 'Europe/Berlin', dates: datesFrom('2024-05-01', 7), heartRateEvery: 60, weighEvery: 2, sleep: true });
  const path = join(folder, `archive-${made++}.zip`);
  await writeTakeoutZip(path, files);
  return readFileSync(path);
}

/** A multipart/form-data body as a browser sends the upload form: the CSRF field, then the file. */
function multipartBody(fields: Record<string, string>, file: { name: string; content: Buffer }): { body: Buffer; type: string } {
  const boundary = `----stride${made++}boundary`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="archive"; filename="${file.name}"\r\ncontent-type: application/zip\r\n\r\n`), file.content, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

/** Posts the account page's upload form with `content`, its CSRF token taken from the page unless `csrf` says otherwise. */
async function upload(t: TestApp, browser: Browser, content: Buffer, csrf?: string) {
  const page = await browser.get('/account');
  assert.equal(page.status, 200);
  const token = csrf ?? formFields(page.body, '/account/imports').csrf_token!;
  const { body, type } = multipartBody(csrf === '' ? {} : { csrf_token: token }, { name: 'takeout-fitbit.zip', content });
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  return t.app.inject({ method: 'POST', url: '/account/imports', headers: { cookie, 'content-type': type }, payload: body });
}

const filesIn = (dir: string) => readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);

forEachDialect('Bring your Fitbit history (account page)', (dialect) => {
  let t: TestApp;
  const archives = mkdtempSync(join(folder, 'uploads-'));
  before(async () => {
    t = await createTestApp(dialect, { TAKEOUT_DIR: archives });
  });
  after(() => t.close());

  const run = (id: string, shouldStop?: () => boolean, onProgress?: (at: { filesDone: number }) => void) =>
    claimAndRun(t.database.stores, `runner-${id}`, { leaseSeconds: 30, coalesceSeconds: t.config.webhooks.coalesceSeconds, limits: archiveLimits(t.config.takeout.maxArchiveBytes), clock: t.clock, ...(shouldStop && { shouldStop }), ...(onProgress && { onProgress }) }, id);

  /** Uploads an archive for a new person; their browser and the import's page address. */
  async function previewed(name: string) {
    const person = await newAccount(t, name);
    const browser = await signedIn(t, person);
    const response = await upload(t, browser, await archiveBytes());
    assert.equal(response.statusCode, 303, response.body.slice(0, 500));
    const location = String(response.headers.location);
    assert.match(location, /^\/account\/imports\/imp_[A-Za-z0-9_-]{16}$/);
    return { person, browser, location, id: location.split('/').pop()! };
  }

  it('uploads an archive through the form, previews it, imports it on confirmation, and reports it', async () => {
    const { browser, location, id } = await previewed('Uploader');
    const preview = await browser.get(location);
    assert.equal(preview.status, 200);
    const found = textOf(preview.body, 'found')!;
    for (const kind of ['Steps', 'Distance', 'Calories', 'Heart rate', 'Sleep', 'Weight']) assert.ok(found.includes(kind), `${kind} in ${found}`);
    assert.match(found, /1 May to 7 May 2024/);
    assert.match(textOf(preview.body, 'import-zone')!, /Europe\/Berlin: named by the archive/);
    assert.match(textOf(preview.body, 'import-unit')!, /kilograms/);
    assert.ok(!preview.body.includes('http-equiv="refresh"'), 'a preview waits for the person: no reload');
    assert.equal(filesIn(archives).length, 1, 'the upload is on disk while it waits');

    const confirm = await browser.post(`${location}/start`, formFields(preview.body, `${location}/start`));
    assert.equal(confirm.status, 303);
    const queued = await browser.get(location);
    assert.match(textOf(queued.body, 'import-state')!, /Waiting to start/);
    assert.ok(queued.body.includes('<meta http-equiv="refresh" content="3">'), 'a queued import reloads itself');
    assert.match(queued.body, /<progress id="import-progress" max="100" value="0">/);

    assert.equal(await run(id), 'finished');
    const done = await browser.get(location);
    assert.equal(done.status, 200);
    assert.match(textOf(done.body, 'import-state')!, /Done/);
    assert.ok(!done.body.includes('http-equiv="refresh"'), 'an ended import stops reloading');
    assert.match(done.body, /<progress id="import-progress" max="100" value="100">/);
    const row = (kind: string) => new RegExp(`<th scope="row">${kind}<br><span class="hint">([^<]*)</span></th><td>(\\d+)</td>`).exec(done.body)?.slice(1).reverse();
    assert.deepEqual(row('Steps'), ['7', '1 May to 7 May 2024']);
    assert.deepEqual(row('Heart rate'), ['7', '1 May to 7 May 2024']);
    assert.deepEqual(row('Sleep')?.[0], '7');
    assert.deepEqual(row('Weight')?.[0], '4');
    assert.ok(textOf(done.body, 'skipped-none') || textOf(done.body, 'skipped'), 'the skipped entries are said');
    assert.deepEqual(filesIn(archives), [], 'the archive is removed when its import ends');

    const account = await browser.get('/account');
    assert.match(textOf(account.body, 'imports')!, /takeout-fitbit\.zip: Done/);
    assert.ok(account.body.includes(`href="${location}"`));
  });

  it('refuses a file that is not a zip, with the reason, and keeps no file', async () => {
    const browser = await signedIn(t, await newAccount(t, 'Notzip'));
    const response = await upload(t, browser, Buffer.from('this is not a zip archive at all, only text\n'.repeat(20)));
    assert.equal(response.statusCode, 400);
    assert.match(response.body, /The archive “takeout-fitbit\.zip” is not a zip archive, or it was cut short/);
    assert.deepEqual(filesIn(archives), []);
  });

  it('refuses an upload without its CSRF token (403) and writes nothing', async () => {
    const browser = await signedIn(t, await newAccount(t, 'Forged'));
    const content = await archiveBytes();
    assert.equal((await upload(t, browser, content, '')).statusCode, 403);
    assert.equal((await upload(t, browser, content, 'not-the-token')).statusCode, 403);
    assert.deepEqual(filesIn(archives), []);
  });

  it('discards a previewed import, and cancels a queued one: the page says so and the archive goes', async () => {
    const first = await previewed('Discarder');
    const page = await first.browser.get(first.location);
    assert.equal((await first.browser.post(`${first.location}/cancel`, formFields(page.body, `${first.location}/cancel`))).status, 303);
    assert.match(textOf((await first.browser.get(first.location)).body, 'import-state')!, /Discarded before it started: nothing was imported/);
    assert.deepEqual(filesIn(archives), []);

    const second = await previewed('Canceller');
    const preview = await second.browser.get(second.location);
    await second.browser.post(`${second.location}/start`, formFields(preview.body, `${second.location}/start`));
    const queued = await second.browser.get(second.location);
    assert.equal((await second.browser.post(`${second.location}/cancel`, formFields(queued.body, `${second.location}/cancel`))).status, 303);
    const cancelled = await second.browser.get(second.location);
    assert.match(textOf(cancelled.body, 'import-state')!, /before it started/);
    assert.ok(!cancelled.body.includes('http-equiv="refresh"'));
    assert.equal(await run(second.id), null, 'nothing is left to run');
    assert.deepEqual(filesIn(archives), []);
  });

  it('shows a running import\'s progress and time left, and cancels it: at its next step while a runner holds it', async () => {
    const { browser, location, id } = await previewed('Runner');
    const preview = await browser.get(location);
    await browser.post(`${location}/start`, formFields(preview.body, `${location}/start`));
    // A runner reads four files and stops (as a server shutting down does), giving its lease back.
    let done = 0;
    assert.equal(await run(id, () => done >= 4, (at) => (done = at.filesDone)), 'stopped');
    t.clock.advance(60);
    const running = await browser.get(location);
    assert.match(textOf(running.body, 'import-state')!, /Importing/);
    assert.ok(running.body.includes('<meta http-equiv="refresh" content="3">'));
    const percent = Number(textOf(running.body, 'import-percent'));
    assert.ok(percent > 0 && percent < 100, `${percent} %`);
    assert.match(running.body, new RegExp(`<progress id="import-progress" max="100" value="${percent}">`));
    assert.match(textOf(running.body, 'time-left')!, /^Time left: (less than a minute|about \d+ minutes?)/);
    assert.match(textOf(running.body, 'kinds-progress')!, /Steps: 7 of 7 days/);

    // Another runner holds it now: the cancel is asked for, and the import stops at its next step.
    const claimed = await t.database.stores.takeoutImports.claim('another-runner', t.clock(), t.clock() + 30, id);
    assert.equal(claimed?.id, id);
    assert.equal((await browser.post(`${location}/cancel`, formFields(running.body, `${location}/cancel`))).status, 303);
    const stopping = await browser.get(location);
    assert.match(textOf(stopping.body, 'import-state')!, /stopping at its next step/);
    assert.ok(!stopping.body.includes(`action="${location}/cancel"`), 'no second Cancel');
    t.clock.advance(31);
    assert.equal(await run(id), 'finished');
    const cancelled = await browser.get(location);
    assert.match(textOf(cancelled.body, 'import-state')!, /Cancelled\./);
    assert.ok(textOf(cancelled.body, 'report')!.includes('Steps'), 'what was imported is reported');
    assert.deepEqual(filesIn(archives), []);
  });

  it('refuses to start a second import while one is queued, saying which (409)', async () => {
    const first = await previewed('Twice');
    const page = await first.browser.get(first.location);
    await first.browser.post(`${first.location}/start`, formFields(page.body, `${first.location}/start`));
    const again = await upload(t, first.browser, await archiveBytes());
    const second = String(again.headers.location);
    const preview = await first.browser.get(second);
    const refused = await first.browser.post(`${second}/start`, formFields(preview.body, `${second}/start`));
    assert.equal(refused.status, 409);
    assert.match(refused.body, new RegExp(`another import \\(${first.id}, of takeout-fitbit\\.zip\\) is queued: one import at a time`));
    for (const location of [first.location, second]) {
      const shown = await first.browser.get(location);
      await first.browser.post(`${location}/cancel`, formFields(shown.body, `${location}/cancel`));
    }
    assert.deepEqual(filesIn(archives), []);
  });

  it('answers 404 for another person\'s import and for malformed ids, and 403 for a confirmation without its token', async () => {
    const owner = await previewed('Owner');
    const other = await signedIn(t, await newAccount(t, 'Other'));
    assert.equal((await other.get(owner.location)).status, 404);
    const page = await other.get('/account');
    const token = formFields(page.body, '/account/imports').csrf_token!;
    assert.equal((await other.post(`${owner.location}/start`, { csrf_token: token })).status, 404);
    assert.equal((await other.post(`${owner.location}/cancel`, { csrf_token: token })).status, 404);
    for (const bad of ['imp_%00AAAAAAAAAAAAAAA', 'imp_short', '..%2F..%2Fetc', `${owner.id}x`]) assert.equal((await owner.browser.get(`/account/imports/${bad}`)).status, 404, bad);
    assert.equal((await owner.browser.post(`${owner.location}/start`, {})).status, 403);
    assert.match(textOf((await owner.browser.get(owner.location)).body, 'import-state')!, /waiting for you to confirm/);
  });
});

forEachDialect('Bring your Fitbit history: the size limit', (dialect) => {
  let t: TestApp;
  const archives = mkdtempSync(join(folder, 'small-'));
  before(async () => {
    t = await createTestApp(dialect, { TAKEOUT_DIR: archives, TAKEOUT_MAX_BYTES: '4096' });
  });
  after(() => t.close());

  it('refuses an upload over TAKEOUT_MAX_BYTES with a clear page, and removes the part written', async () => {
    const browser = await signedIn(t, await newAccount(t, 'Large'));
    const content = await archiveBytes();
    assert.ok(content.length > 4096);
    const response = await upload(t, browser, content);
    assert.equal(response.statusCode, 413);
    assert.match(response.body, /larger than the 4 KiB an archive may be/);
    assert.deepEqual(filesIn(archives), []);
    assert.equal((await browser.get('/account')).status, 200, 'the server answers on');
  });
});
