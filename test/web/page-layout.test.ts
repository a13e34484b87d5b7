/**
 * Every page in a real Chromium at a phone's width (390 px) and a computer's (1280 px), in the
 * light and the dark scheme: no element but a marked scroll container (data-scroll) is wider than
 * the window or sticks out of the page's column, and no chart's text is drawn under 11 px. One browser and one page per person, on
 * SQLite only: the database plays no part in how a page is laid out. With TEST_SCREENSHOTS set,
 * each page's picture is kept under test-artifacts/layout/.
 *
 * "Bring your Fitbit history" is laid out in each state of an import a person sees: an archive
 * uploaded through the form, read, previewed, confirmed, under way and reported, each step taken
 * by the test as a server's runner would.
 *
 * The small things a newcomer met on these pages are asserted here too, where the browser is the
 * judge: the gap between a form's error and its first label, buttons of one card alike in width,
 * the consent page naming the test person who answers, the email carried from sign-up to sign-in.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { minutesOfReadings } from '../../src/domain/heart-rate-readings.js';
import { writePersonData } from '../../src/domain/person-data.js';
import { archiveLimits } from '../../src/domain/takeout/imports.js';
import { claimAndPreview, claimAndRun } from '../../src/domain/takeout/runner.js';
import { LIVES, synthesizePerson } from '../../src/domain/synthetic-person.js';
import { EVENT_TYPES } from '../../src/store/events.js';
import { authorizeUrl, createFixture, createOAuthTestApp, REDIRECT_URI, type Fixture } from '../oauth/flow.js';
import { serveDatabase, type ServedStride, type TestApp } from '../support/app.js';
import { browserUnavailable, launchBrowser, screenshotPath } from '../support/browser.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { datesFrom, GLOBAL, takeoutHistory, writeTakeoutZip, type TakeoutFile } from '../support/takeout-archive.js';

cheapPasswordHashing();

const WIDTHS = [390, 1280] as const;
const SCHEMES = ['light', 'dark'] as const;
const SCREENSHOTS = process.env.TEST_SCREENSHOTS !== undefined && process.env.TEST_SCREENSHOTS !== '';
/** An endpoint's URL longer than a phone's line, with one long path segment. */
const LONG_ENDPOINT = 'http://127.0.0.1:9/hooks/stride/receivers/activity-data-updates-for-the-pace-coach-production-environment/v2?tenant=walkers';

interface Found {
  tooWide: string[];
  smallText: string[];
  pageWidth: number;
  window: number;
}

/** What of the page is wider than the window, and which SVG text is drawn under 11 CSS px. */
function measure(page: Page): Promise<Found> {
  return page.evaluate(() => {
    const window = document.documentElement.clientWidth;
    const name = (el: Element) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.classList.length ? `.${[...el.classList].join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    const main = document.querySelector('main')!;
    const column = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
    const tooWide: string[] = [];
    const flagged = new Set<Element>();
    for (const el of document.querySelectorAll('body *')) {
      // Inside a marked scroll container, content may be as wide as it likes: the box scrolls.
      if (el.parentElement?.closest('[data-scroll]')) continue;
      // Off-screen on purpose: the skip link until focused, text for screen readers.
      if (el.closest('.skip, .visually-hidden')) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      const outside = box.right > window + 0.5 || box.left < -0.5;
      // Nor does it stick out of the page's column (a table too wide for it would, at any window's width).
      const outOfColumn = el !== main && main.contains(el) && box.right > column + 0.5;
      if (!outside && !outOfColumn) continue;
      // The outermost such element is named; what it holds sticks out with it.
      if (el.parentElement && flagged.has(el.parentElement)) {
        flagged.add(el);
        continue;
      }
      flagged.add(el);
      tooWide.push(outside ? `${name(el)}: ${Math.round(box.left)}–${Math.round(box.right)}` : `${name(el)}: right of the column, at ${Math.round(box.right)} > ${Math.round(column)}`);
    }
    const smallText: string[] = [];
    for (const text of document.querySelectorAll('svg text')) {
      const matrix = (text as SVGGraphicsElement).getScreenCTM();
      if (!matrix) continue;
      const size = parseFloat(getComputedStyle(text).fontSize) * Math.hypot(matrix.a, matrix.b);
      if (size < 11) smallText.push(`${name(text)} at ${size.toFixed(1)} px`);
    }
    return { tooWide, smallText, pageWidth: document.documentElement.scrollWidth, window };
  });
}

/**
 * `look` at the page, again once it has loaded if the page reloaded itself meanwhile: a page that
 * follows work in progress (an import, a delivery) does, every few seconds, the same content again.
 */
async function steadily<T>(page: Page, look: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await look();
    } catch (error) {
      if (attempt >= 5 || !/Execution context was destroyed|because of a navigation/.test(String(error))) throw error;
      await page.waitForLoadState('load');
    }
  }
}

/** The page at every width and scheme: it fits, and its charts' text is legible. */
async function checkEveryWay(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      const found = await steadily(page, () => measure(page));
      // Taken before the checks: the picture of a page that fails them is the one to look at.
      if (SCREENSHOTS) await steadily(page, () => page.screenshot({ path: screenshotPath(`layout/${name}-${width}-${scheme}`), fullPage: true }));
      const where = `${name} (${new URL(page.url()).pathname}) at ${width} px, ${scheme}`;
      assert.ok(found.pageWidth <= found.window, `${where}: the page is ${found.pageWidth} px wide`);
      assert.deepEqual(found.tooWide, [], `${where}: wider than the window`);
      assert.deepEqual(found.smallText, [], `${where}: chart text under 11 px`);
    }
  }
}

/** The page's tables that a phone would cut: neither laid out as stacked rows nor in a marked scroll container. */
function unmarkedTables(page: Page): Promise<string[]> {
  return page.evaluate(() => [...document.querySelectorAll('main table')]
    .filter((table) => getComputedStyle(table).display === 'table' && !table.closest('[data-scroll]'))
    .map((table) => `table${table.id ? `#${table.id}` : ''}.${[...table.classList].join('.')}`));
}

/**
 * A week of every kind as Fitbit's export writes it, with what real archives also hold: a file cut
 * short, minutes out of range, not a number or repeated, and a kind Stride does not hold.
 */
function messyArchive(): TakeoutFile[] {
  const { files } = takeoutHistory({ zone: 'Europe/Berlin', dates: datesFrom('2024-05-01', 7), heartRateEvery: 60, weighEvery: 2, sleep: true });
  const steps = [
    { dateTime: '05/08/24 09:00:00', value: '30' },
    { dateTime: '05/08/24 09:01:00', value: 5000 },
    { dateTime: '05/08/24 09:02:00', value: 'many' },
    { dateTime: '05/08/24 09:00:00', value: '31' },
  ];
  return [
    ...files,
    { name: `${GLOBAL}/steps-2024-05-08.json`, content: () => JSON.stringify(steps) },
    { name: `${GLOBAL}/calories-2024-05-08.json`, content: () => '[{"dateTime": "05/08/24 09:00:00", "value": "1.5"' },
    { name: `${GLOBAL}/altitude-2024-05-01.json`, content: () => '[]' },
  ];
}

/** The top of `below` minus the bottom of `above`, in CSS px. */
async function gap(page: Page, above: string, below: string): Promise<number> {
  const a = await page.locator(above).first().boundingBox();
  const b = await page.locator(below).first().boundingBox();
  assert.ok(a && b, `${above} and ${below} are shown`);
  return b.y - (a.y + a.height);
}

/** The widths of the buttons shown in each `selector` box (copy buttons and link-like ones aside), by box. */
function buttonWidths(page: Page, selector: string): Promise<number[][]> {
  return page.evaluate((selector) => [...document.querySelectorAll(selector)].map((box) =>
    [...box.querySelectorAll('button, a.button')]
      .filter((b) => !b.matches('.link, .copy') && b.getBoundingClientRect().width > 0)
      .map((b) => Math.round(b.getBoundingClientRect().width))), selector);
}

const skip = browserUnavailable();
describe('every page at 390 and 1280 px, light and dark', { skip: skip ?? false }, () => {
  let t: TestApp;
  let f: Fixture;
  let served: ServedStride;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let anonymous: Page;
  let person: Page;
  let developer: Page;
  let endpointPath: string;
  const appPath = () => `/dashboard/apps/${encodeURIComponent(f.app.clientId)}`;
  const go = async (page: Page, path: string) => {
    const response = await page.goto(served.url + path);
    assert.ok(response && response.status() < 500, `${path}: ${response?.status()}`);
  };

  const archives = mkdtempSync(join(tmpdir(), 'stride-page-layout-'));

  before(async () => {
    const launched = launchBrowser();
    t = await createOAuthTestApp('sqlite');
    f = await createFixture(t);
    // SMTP_URL gives the sign-in page its "Forgot your password?" form (nothing is mailed here).
    served = await serveDatabase(t.database, { SMTP_URL: 'smtp://127.0.0.1:9', TAKEOUT_DIR: join(archives, 'uploads') });
    const { stores } = t.database;
    const now = Math.floor(Date.now() / 1000);
    // A person with two weeks of every kind, as `stride demo` writes them.
    const life = LIVES.office_worker;
    const made = synthesizePerson(life, now, 14, 7);
    await stores.users.updateProfile(f.user.id, { timezone: life.timezone }, now);
    await writePersonData(stores, { id: f.user.id, timezone: life.timezone }, { steps: made.steps, calories: made.calories, heartrate: minutesOfReadings(made.heartrate), sleep: made.sleep, weight: made.weight }, now, 0);
    // A webhook endpoint with a long URL and deliveries that failed.
    const endpoint = (await stores.webhooks.add(f.app.id, LONG_ENDPOINT, [...EVENT_TYPES], now, { atMost: 10 }))!;
    for (let i = 0; i < 3; i++) assert.ok(await stores.webhooks.sendTest(endpoint.id, now - i * 3600));
    await t.database.db.kysely.updateTable('webhook_deliveries')
      .set({ attempts: 4, last_status: 502, last_latency_ms: 1234, last_error: 'the receiver answered 502 Bad Gateway: upstream connect error or disconnect/reset before headers', next_attempt_at: now + 3600 })
      .where('endpoint_id', '=', endpoint.id).execute();
    endpointPath = `${appPath()}/webhooks/${endpoint.id}`;
    // The app's usage: token requests with its credentials that fail.
    for (let i = 0; i < 5; i++) {
      await fetch(`${served.url}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: `nope-${i}`, redirect_uri: REDIRECT_URI, client_id: f.app.clientId, client_secret: f.secret }) });
    }
    await served.flushUsage();

    browser = await launched;
    const open = async (email?: string) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      if (email) {
        await page.goto(`${served.url}/login`);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(f.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL((url) => url.pathname === '/account');
      }
      return page;
    };
    [anonymous, person, developer] = await Promise.all([open(), open(f.user.email), open(f.developer.email)]);
  });

  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await served?.close();
    await t?.close();
    rmSync(archives, { recursive: true, force: true });
  });

  it('lays out the pages of someone signed out', async () => {
    for (const [name, path] of [
      ['login', '/login'],
      ['signup', '/signup'],
      ['forgot-password', '/forgot-password'],
      ['demo-callback', '/demo/callback?code=Zm9vYmFyYmF6cXV4cXV1eGNvZGVvZmFkZW1vcnVuMTIz&state=0b8f1c2a9d'],
      ['demo-callback-denied', '/demo/callback?error=access_denied&state=0b8f1c2a9d'],
      ['account-deleted', '/account/deleted'],
    ] as const) {
      await go(anonymous, path);
      await checkEveryWay(anonymous, name);
    }
  });

  it('lays out the answer to "Forgot your password?"', async () => {
    await go(anonymous, '/forgot-password');
    await anonymous.getByLabel('Email').fill('nobody-has-this-address@example.com');
    await anonymous.getByRole('button', { name: 'Send me a link' }).click();
    await anonymous.locator('#notice').waitFor();
    assert.match(await anonymous.locator('#notice').innerText(), /If an account uses that address/);
    await checkEveryWay(anonymous, 'forgot-password-sent');
  });

  it('tells someone signed out at /device that a device is waiting for them to sign in', async () => {
    await go(anonymous, '/device?user_code=BCDF-GHJK');
    assert.equal(new URL(anonymous.url()).pathname, '/login');
    assert.match(await anonymous.locator('#device-waiting').innerText(), /device is waiting to be connected.*Sign in/);
    await checkEveryWay(anonymous, 'device-signed-out');
    await go(anonymous, '/login');
    assert.equal(await anonymous.locator('#device-waiting').count(), 0, 'not said on a sign-in for anything else');
  });

  it('fills in the email on the sign-in page after sign-up, and keeps a gap under the form\'s error', async () => {
    await go(anonymous, '/signup');
    await anonymous.getByRole('button', { name: 'Create account' }).click();
    await anonymous.locator('#form-error').waitFor();
    await anonymous.setViewportSize({ width: 390, height: 900 });
    assert.ok((await gap(anonymous, '#form-error', 'form label')) >= 8, 'the error stands apart from the first label');
    await checkEveryWay(anonymous, 'signup-errors');
    const email = `newcomer-${Date.now()}@example.com`;
    await anonymous.getByLabel('Email').fill(email);
    await anonymous.getByLabel('Password', { exact: true }).fill('a long enough password');
    await anonymous.getByRole('button', { name: 'Create account' }).click();
    await anonymous.waitForURL((url) => url.pathname === '/login');
    assert.equal(await anonymous.getByLabel('Email').inputValue(), email);
  });

  it('lays out the pages of a person: account, data, device and consent', async () => {
    await go(person, '/account');
    assert.match(await person.locator('#see-your-data').locator('..').innerText(), /steps, distance, calories, heart rate, sleep and weight/);
    await checkEveryWay(person, 'account');
    await go(person, '/account/data');
    assert.ok((await person.locator('svg.data-chart').count()) > 0, 'the data page has charts');
    await checkEveryWay(person, 'data');
    await person.locator('.chart-links a').last().click({ force: true });
    await person.waitForURL((url) => /^\/account\/data\/\d{4}-\d\d-\d\d$/.test(url.pathname));
    await checkEveryWay(person, 'data-day');
    await go(person, '/device');
    await person.getByLabel('Code shown on your device').fill('NOPE-NOPE');
    await person.getByRole('button', { name: 'Continue' }).click();
    await person.locator('#device-error').waitFor();
    await person.setViewportSize({ width: 390, height: 900 });
    assert.ok((await gap(person, '#device-error', 'form label')) >= 8, 'the error stands apart from the label');
    await checkEveryWay(person, 'device-error');
    await go(person, authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'read_profile read_activity', state: 's' }));
    await person.getByRole('button', { name: 'Allow' }).waitFor();
    await checkEveryWay(person, 'consent');
  });

  it('lays out "Bring your Fitbit history": the upload, the archive read, its preview, the import under way, and its report', async () => {
    // The server under test runs no import runner: the test takes each step as a server's runner would.
    const settings = { leaseSeconds: 30, limits: archiveLimits(t.config.takeout.maxArchiveBytes), clock: () => Math.floor(Date.now() / 1000) };
    const archive = join(archives, 'takeout-fitbit.zip');
    await writeTakeoutZip(archive, messyArchive());
    await go(person, '/account');
    await person.getByLabel('Your Takeout archive').setInputFiles(archive);
    await person.getByRole('button', { name: 'Upload and preview' }).click();
    await person.waitForURL((url) => /^\/account\/imports\/imp_/.test(url.pathname));
    const location = new URL(person.url()).pathname;
    const id = location.split('/').pop()!;
    const state = () => steadily(person, () => person.locator('#import-state').innerText());
    const phoneTables = async (name: string) => {
      await person.setViewportSize({ width: 390, height: 900 });
      assert.deepEqual(await steadily(person, () => unmarkedTables(person)), [], `${name}: every table is stacked or scrolls on its own`);
    };
    assert.match(await state(), /^State: Reading your archive…$/, 'said once, with no full stop after the ellipsis');
    await checkEveryWay(person, 'import-reading');

    assert.equal(await claimAndPreview(t.database.stores, 'layout-reader', settings, id), 'previewed');
    await go(person, location);
    assert.match(await state(), /waiting for you to confirm/);
    assert.ok(await person.locator('#unreadable').isVisible(), 'the file cut short is named');
    assert.ok(await person.locator('#not-read').isVisible(), 'the kind Stride does not hold is named');
    await checkEveryWay(person, 'import-preview');
    await phoneTables('import-preview');

    await person.getByRole('button', { name: 'Confirm and import' }).click();
    await person.locator('#import-progress').waitFor();
    assert.match(await state(), /Waiting to start/);
    await checkEveryWay(person, 'import-queued');

    // A runner reads four files and stops, as a server shutting down does: the import is under way.
    let filesDone = 0;
    const run = { ...settings, coalesceSeconds: t.config.webhooks.coalesceSeconds };
    assert.equal(await claimAndRun(t.database.stores, 'layout-runner', { ...run, shouldStop: () => filesDone >= 4, onProgress: (at) => (filesDone = at.filesDone) }, id), 'stopped');
    await go(person, location);
    assert.match(await state(), /Importing/);
    await checkEveryWay(person, 'import-running');
    await person.setViewportSize({ width: 390, height: 900 });
    assert.ok((await steadily(person, () => gap(person, 'p.hint >> text=Cancelling keeps', 'button >> text=Cancel the import'))) >= 8, 'the hint stands apart from the button');

    assert.equal(await claimAndRun(t.database.stores, 'layout-runner', run, id), 'finished');
    await go(person, location);
    assert.match(await state(), /Done/);
    assert.ok(await person.locator('#report').isVisible() && await person.locator('#skipped').isVisible(), 'the report names what was imported and what was skipped');
    await checkEveryWay(person, 'import-report');
    await phoneTables('import-report');

    await go(person, '/account');
    assert.match(await person.locator('#imports').innerText(), /takeout-fitbit\.zip: Done/);
    await checkEveryWay(person, 'account-imports');
  });

  it('offers "Add test people" to connect a test person while there are none', async () => {
    await go(developer, `${appPath()}/connect-test-person`);
    assert.equal(await developer.getByRole('link', { name: 'Add test people' }).getAttribute('href'), '/dashboard/test-people');
    assert.equal(await developer.locator('#start-connect').count(), 0);
    await checkEveryWay(developer, 'connect-test-person-none');
  });

  it('lays out the developer\'s pages: apps, usage, webhooks, test people', async () => {
    await go(developer, '/dashboard/test-people');
    await developer.getByRole('button', { name: 'Add test people' }).click();
    await developer.locator('#notice').waitFor();
    await checkEveryWay(developer, 'test-people');
    await developer.setViewportSize({ width: 390, height: 900 });
    for (const widths of await buttonWidths(developer, '.card .actions')) assert.equal(new Set(widths).size, 1, `the buttons of a card are alike: ${widths}`);
    for (const widths of await buttonWidths(developer, '.card .inline-form')) assert.ok(widths.every((w) => w > 300), `a one-field form's button fills its line: ${widths}`);

    await developer.locator('.card button.late-sync').first().click();
    const name = (await developer.locator('.card h2').first().innerText()).replace(/[()]/g, '\\$&');
    assert.match(await developer.locator('#notice').innerText(), new RegExp(`^Late sync of ${name}: a walk on \\d{4}-\\d\\d-\\d\\d \\(`));

    for (const [name, path] of [
      ['dashboard', '/dashboard'],
      ['app-usage', appPath()],
      ['webhooks', `${appPath()}/webhooks`],
      ['webhook-detail', endpointPath],
      ['connect-test-person', `${appPath()}/connect-test-person`],
      ['fitbit-subscriber', `${appPath()}/fitbit-subscriber`],
      ['app-delete', `${appPath()}/delete`],
    ] as const) {
      await go(developer, path);
      await checkEveryWay(developer, name);
    }
    await developer.setViewportSize({ width: 390, height: 900 });
    await go(developer, endpointPath);
    for (const widths of await buttonWidths(developer, '.panel .actions')) assert.equal(new Set(widths).size, 1, `the buttons of the endpoint's panel are alike: ${widths}`);
    // The usage chart is drawn: its y axis counts the five failed token requests.
    await go(developer, appPath());
    assert.ok((await developer.locator('#usage-chart .tick-y').count()) >= 2);

    await go(developer, '/dashboard/test-people');
    await developer.locator('.card a.see-data').first().click();
    await checkEveryWay(developer, 'test-person-data');
  });

  it('names the test person who answers in the consent page\'s scopes', async () => {
    await go(developer, authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: 'read_profile read_activity', state: 's' }));
    const scope = developer.locator('label.check', { has: developer.locator('input[value="read_profile"]') });
    assert.match(await scope.innerText(), /^See your profile/);
    const choice = developer.locator('.consent-as label.check').nth(1);
    const who = (await choice.innerText()).split(' — ')[0]!.trim().replace(/[()]/g, '\\$&');
    await choice.locator('input').check();
    assert.match(await scope.innerText(), new RegExp(`^See ${who}'s profile`));
    assert.match(await developer.locator('label.check', { has: developer.locator('input[value="read_activity"]') }).innerText(), new RegExp(`^See ${who}'s steps`));
    await checkEveryWay(developer, 'consent-as');
  });

  it('registers an app on a form whose hint matches its boxes, and whose error stands apart', async () => {
    await go(developer, '/dashboard/apps/new');
    const boxes = developer.locator('input[name="grant_types"]');
    assert.deepEqual([await boxes.nth(0).isChecked(), await boxes.nth(1).isChecked()], [true, true]);
    assert.match(await developer.getByText(/first two/).innerText(), /ticked here/);
    await checkEveryWay(developer, 'app-new');
    await developer.getByRole('button', { name: 'Register app' }).click();
    await developer.locator('p.error').first().waitFor();
    await developer.setViewportSize({ width: 390, height: 900 });
    assert.ok((await gap(developer, 'p.error', 'form label')) >= 8, 'the error stands apart from the first label');
    await checkEveryWay(developer, 'app-new-errors');
  });
});
