/**
 * "Bring your Fitbit history" on the account page (src/web/pages/account-imports.ts): a generated
 * Takeout archive uploaded through the real multipart form, answered before it is read ("Reading
 * your archive…"), read by the runner's own call (again after a reader that stopped), previewed,
 * confirmed, run, and reported; uploads never confirmed expired by the sweep with the clock moved,
 * their archives removed; a file that is not a zip refused with its reason and removed;
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
import { claimAndPreview, claimAndRun } from '../../src/domain/takeout/runner.js';
import { archiveLimits, expireUnconfirmedImports } from '../../src/domain/takeout/imports.js';
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

  const read = (id: string, owner = `reader-${id}`) => claimAndPreview(t.database.stores, owner, { leaseSeconds: 30, limits: archiveLimits(t.config.takeout.maxArchiveBytes), clock: t.clock }, id);

  /** Uploads an archive (generated, unless `content`) for a new person; their browser and the import's page address, not read yet. */
  async function uploaded(name: string, content?: Buffer) {
    const person = await newAccount(t, name);
    const browser = await signedIn(t, person);
    const response = await upload(t, browser, content ?? (await archiveBytes()));
    assert.equal(response.statusCode, 303, response.body.slice(0, 500));
    const location = String(response.headers.location);
    assert.match(location, /^\/account\/imports\/imp_[A-Za-z0-9_-]{16}$/);
    return { person, browser, location, id: location.split('/').pop()! };
  }

  /** Uploads an archive for a new person and reads it as a runner would: it waits for their confirmation. */
  async function previewed(name: string) {
    const made = await uploaded(name);
    assert.equal(await read(made.id), 'previewed');
    return made;
  }

  /** The stored import's state. */
  const stateOf = async (id: string) => (await t.database.db.kysely.selectFrom('takeout_imports').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;

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
    const row = (kind: string) => new RegExp(`<th scope="row">${kind}<br><span class="hint">([^<]*)</span></th><td data-label="Days">(\\d+)</td>`).exec(done.body)?.slice(1).reverse();
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

  it('answers the upload before the archive is read: the page says "Reading your archive…" and reloads itself until the preview is there', async () => {
    const { browser, location, id } = await uploaded('Early');
    // No runner has read it: the upload was answered with the file on disk and nothing found yet.
    assert.equal(await stateOf(id), 'reading');
    assert.equal(filesIn(archives).length, 1);
    const reading = await browser.get(location);
    assert.equal(reading.status, 200);
    assert.match(reading.body, /<h1>Reading your Fitbit archive<\/h1>/);
    assert.match(textOf(reading.body, 'import-state')!, /Reading your archive…/);
    assert.match(textOf(reading.body, 'import-reading')!, /before anything is imported/);
    assert.ok(reading.body.includes('<meta http-equiv="refresh" content="2">'), 'the page reloads itself while the archive is read');
    assert.equal(textOf(reading.body, 'found'), undefined, 'nothing found yet');
    assert.ok(!reading.body.includes('Confirm and import'));
    const early = await browser.post(`${location}/start`, formFields(reading.body, `${location}/cancel`));
    assert.equal(early.status, 409, 'an archive not read yet cannot be confirmed');

    assert.equal(await read(id), 'previewed');
    const shown = await browser.get(location);
    assert.match(shown.body, /<h1>Check your Fitbit archive<\/h1>/);
    assert.match(textOf(shown.body, 'found')!, /1 May to 7 May 2024/);
    assert.ok(!shown.body.includes('http-equiv="refresh"'));
    assert.equal(await read(id), null, 'read once');
    await browser.post(`${location}/cancel`, formFields(shown.body, `${location}/cancel`));
    assert.deepEqual(filesIn(archives), []);
  });

  it('reads again an archive whose reader stopped, once its lease ran out', async () => {
    const { browser, location, id } = await uploaded('Reread');
    // A runner took the read and its process stopped: the lease holds it until it runs out.
    const taken = await t.database.stores.takeoutImports.claim('stopped-process', t.clock(), t.clock() + 30, id, 'preview');
    assert.equal(taken?.id, id);
    assert.equal(await read(id), null, 'not while its lease lives');
    t.clock.advance(31);
    assert.equal(await read(id), 'previewed');
    assert.match(textOf((await browser.get(location)).body, 'import-state')!, /waiting for you to confirm/);
    const late = { timezone: { name: 'UTC', from: 'profile' as const }, weight_unit: { unit: 'kg' as const, from: 'default' as const }, kinds: {}, not_read: {}, unreadable: [], files_total: 0 };
    assert.equal(await t.database.stores.takeoutImports.previewFound(id, 'stopped-process', { archiveBytes: 1, archiveFingerprint: 'x', timezone: 'UTC', preview: late }, t.clock()), false);
    assert.match(textOf((await browser.get(location)).body, 'import-zone')!, /Europe\/Berlin/, 'the stopped reader cannot write over the preview');
    const page = await browser.get(location);
    await browser.post(`${location}/cancel`, formFields(page.body, `${location}/cancel`));
    assert.deepEqual(filesIn(archives), []);
  });

  it('discards an archive while it is being read: the archive goes, and the read finds nothing to write', async () => {
    const { browser, location, id } = await uploaded('Impatient');
    const reading = await browser.get(location);
    assert.equal((await browser.post(`${location}/cancel`, formFields(reading.body, `${location}/cancel`))).status, 303);
    assert.match(textOf((await browser.get(location)).body, 'import-state')!, /Discarded before it started/);
    assert.deepEqual(filesIn(archives), []);
    assert.equal(await read(id), null);
  });

  it('refuses a file that is not a zip once it is read, with the reason, and keeps no file', async () => {
    const { browser, location, id } = await uploaded('Notzip', Buffer.from('this is not a zip archive at all, only text\n'.repeat(20)));
    assert.equal(await read(id), 'refused');
    const page = await browser.get(location);
    assert.equal(page.status, 200);
    assert.match(textOf(page.body, 'import-state')!, /Refused: nothing was imported/);
    assert.match(textOf(page.body, 'import-error')!, /It was refused: the archive is not a zip archive, or it was cut short/);
    assert.ok(!page.body.includes('http-equiv="refresh"'));
    assert.equal(textOf(page.body, 'import-progress'), undefined);
    assert.deepEqual(filesIn(archives), []);
  });

  it('expires uploads never confirmed after TAKEOUT_UNCONFIRMED_KEPT, removing their archives; confirmed ones are left alone', async () => {
    const kept = t.config.takeout.unconfirmedKeptSeconds;
    assert.equal(kept, 86_400);
    const sweep = () => expireUnconfirmedImports(t.database.stores, t.clock(), kept);
    const waiting = await previewed('Forgetful');
    const unread = await uploaded('Abandoned');
    const confirmed = await previewed('Decided');
    const page = await confirmed.browser.get(confirmed.location);
    await confirmed.browser.post(`${confirmed.location}/start`, formFields(page.body, `${confirmed.location}/start`));
    assert.equal(filesIn(archives).length, 3);

    t.clock.advance(kept - 5);
    assert.deepEqual(await sweep(), [], 'not before their time');
    const fresh = await uploaded('Late');
    t.clock.advance(10);
    const expired = await sweep();
    assert.deepEqual(expired.map((imported) => imported.id).sort(), [waiting.id, unread.id].sort());
    assert.equal(filesIn(archives).length, 2, 'the queued import\'s archive and the fresh upload stay');
    assert.equal(await stateOf(confirmed.id), 'queued');
    assert.equal(await stateOf(fresh.id), 'reading');
    assert.deepEqual(await sweep(), [], 'expired once');

    const shown = await waiting.browser.get(waiting.location);
    assert.match(textOf(shown.body, 'import-state')!, /Expired: it was not confirmed in time, and the archive was removed/);
    assert.match(textOf(shown.body, 'import-expired')!, /upload the archive again/);
    assert.ok(!shown.body.includes('Confirm and import') && !shown.body.includes('http-equiv="refresh"'));
    const refusedStart = await waiting.browser.post(`${waiting.location}/start`, formFields((await waiting.browser.get('/account')).body, '/account/imports'));
    assert.equal(refusedStart.status, 409, 'an expired import cannot start');
    assert.match(textOf((await waiting.browser.get('/account')).body, 'imports')!, /takeout-fitbit\.zip: Expired/);
    assert.equal(await read(unread.id), null, 'an expired upload is never read');

    for (const made of [confirmed, fresh]) {
      const shownPage = await made.browser.get(made.location);
      await made.browser.post(`${made.location}/cancel`, formFields(shownPage.body, `${made.location}/cancel`));
    }
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
    assert.equal(await read(second.split('/').pop()!), 'previewed');
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
