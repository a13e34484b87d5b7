/**
 * The "Your data" pages (docs/web.md): the overview's numbers are those
 * `/v1/users/me/summary/daily/` answers for the same person and dates, a day's minutes those of
 * the `/v1` minute series; a person sees only their own data and a developer only their own test
 * people's (anyone else's, a malformed id or a NUL is not found); a person without data is told
 * how data arrives instead of being shown empty charts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DateTime } from 'luxon';
import { addTestPeople } from '../../src/domain/test-people.js';
import type { TestPerson } from '../../src/store/test-people.js';
import type { User } from '../../src/store/users.js';
import { writeLife } from '../api/fitbit/support-person.js';
import { Browser, createFixture, createOAuthTestApp, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { ALL_RESOURCE_SCOPES, bearer, issueAccessToken } from '../support/tokens.js';
import { formPage, newAccount, signedIn, textOf } from './pages-support.js';

cheapPasswordHashing();

interface SummaryDay {
  date: string;
  steps: number;
  distance: number;
  calories: number;
  resting_heart_rate: number | null;
  minutes_asleep: number;
  weight: number | null;
}

/** The rows of the table `id`: each row's `data-…` attribute (`key`) and the text of each cell with a class. */
function tableRows(html: string, id: string, key: 'date' | 'start'): Map<string, Record<string, string>> {
  const table = new RegExp(`<table[^>]*id="${id}"[\\s\\S]*?</table>`).exec(html);
  assert.ok(table, `no table ${id}`);
  const rows = new Map<string, Record<string, string>>();
  for (const row of table[0].matchAll(new RegExp(`<tr data-${key}="([^"]+)"([^>]*)>([\\s\\S]*?)</tr>`, 'g'))) {
    const cells: Record<string, string> = {};
    for (const cell of row[3]!.matchAll(/<td class="([^"]+)">([^<]*)<\/td>/g)) cells[cell[1]!] = cell[2]!;
    for (const attribute of row[2]!.matchAll(/data-([a-z]+)="([^"]*)"/g)) cells[attribute[1]!] = attribute[2]!;
    rows.set(row[1]!, cells);
  }
  return rows;
}

/** The rows of the table of a kind (`heart`, `sleep`, `weight`), or none where the page says it has none. */
function kindRows(html: string, kind: string): Map<string, Record<string, string>> {
  return html.includes(`id="${kind}-empty"`) ? new Map() : tableRows(html, `${kind}-table`, 'date');
}

/** A number as the pages write it: thousands separated by commas. */
const numberOf = (text: string) => Number(text.replace(/,/g, ''));
/** "7:05" in minutes. */
const minutesOf = (text: string) => {
  const match = /^(\d+):(\d\d)$/.exec(text);
  assert.ok(match, `not a duration: ${text}`);
  return Number(match[1]) * 60 + Number(match[2]);
};

forEachDialect('your data in charts', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let person: User;
  let token: string;
  let browser: Browser;
  let stranger: User;
  let strangerToken: string;
  let developer: Browser;
  let mine: TestPerson[];
  let theirs: TestPerson[];

  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
    person = await newAccount(t, 'Charted');
    await writeLife(t, person.id, 'runner', 40);
    token = (await issueAccessToken(t, person, ALL_RESOURCE_SCOPES)).token;
    browser = await signedIn(t, person);
    stranger = await newAccount(t, 'Stranger');
    await writeLife(t, stranger.id, 'night_shift_worker', 5);
    strangerToken = (await issueAccessToken(t, stranger, ALL_RESOURCE_SCOPES)).token;
    mine = await addTestPeople(t.database.stores, f.developer, t.clock(), { days: 3, coalesceSeconds: 0 });
    theirs = await addTestPeople(t.database.stores, await newAccount(t, 'Other Developer'), t.clock(), { days: 3, coalesceSeconds: 0 });
    developer = await signedIn(t, f.developer);
  });
  after(() => t.close());

  const summaryOf = async (bearerToken: string, first: string, last: string): Promise<SummaryDay[]> => {
    const response = await t.app.inject({ url: `/v1/users/me/summary/daily/?start_date=${first}&end_date=${last}`, headers: bearer(bearerToken) });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().days;
  };

  /** Checks the overview's tables against the summary's days: every day's steps, and the days of each other kind. */
  const assertOverviewIsSummary = (html: string, days: SummaryDay[]) => {
    const steps = tableRows(html, 'steps-table', 'date');
    assert.deepEqual([...steps.keys()].sort(), days.map((day) => day.date));
    for (const day of days) {
      const row = steps.get(day.date)!;
      assert.equal(numberOf(row.steps!), day.steps, `steps of ${day.date}`);
      assert.equal(numberOf(row.distance!), Math.round(day.distance / 10) / 100, `distance of ${day.date} in km`);
      assert.equal(numberOf(row.calories!), day.calories, `calories of ${day.date}`);
    }
    const resting = kindRows(html, 'heart');
    assert.deepEqual([...resting.keys()].sort(), days.filter((day) => day.resting_heart_rate !== null).map((day) => day.date));
    for (const [date, row] of resting) assert.equal(numberOf(row.resting!), days.find((day) => day.date === date)!.resting_heart_rate, `resting heart rate of ${date}`);
    const sleep = kindRows(html, 'sleep');
    assert.deepEqual([...sleep.keys()].sort(), days.filter((day) => day.minutes_asleep > 0).map((day) => day.date));
    for (const [date, row] of sleep) {
      const asleep = days.find((day) => day.date === date)!.minutes_asleep;
      assert.equal(Number(row.minutes), asleep, `minutes asleep of ${date}`);
      // As shown: in hours and minutes.
      assert.equal(minutesOf(row.asleep!), asleep, `minutes asleep of ${date}, as shown`);
    }
    const weight = kindRows(html, 'weight');
    assert.deepEqual([...weight.keys()].sort(), days.filter((day) => day.weight !== null).map((day) => day.date));
    for (const [date, row] of weight) assert.equal(Number(row.weight), days.find((day) => day.date === date)!.weight, `weight of ${date}`);
  };

  const datesOf = (days: number) => {
    const today = DateTime.fromSeconds(t.clock(), { zone: 'America/New_York' });
    return { first: today.minus({ days: days - 1 }).toISODate()!, last: today.toISODate()! };
  };

  describe('the overview', () => {
    it('shows the last 30 days with the numbers the daily summary answers', async () => {
      const page = await browser.get('/account/data');
      assert.equal(page.status, 200);
      assert.equal(page.headers['cache-control'], 'no-store');
      const { first, last } = datesOf(30);
      const days = await summaryOf(token, first, last);
      // Today may have just begun in New York (no steps walked yet): every day before it has some.
      assert.ok(days.slice(0, -1).every((day) => day.steps > 0) && days.some((day) => day.weight !== null) && days.some((day) => day.minutes_asleep > 0));
      assertOverviewIsSummary(page.body, days);
      // Each day of the overview links to its day.
      assert.match(page.body, new RegExp(`<a href="/account/data/${last}">`));
      assert.equal([...page.body.matchAll(/<div class="chart-links" aria-hidden="true">/g)].length, 1, 'the bars of the steps chart link to their days');
      assert.equal([...page.body.matchAll(/<a href="\/account\/data\/\d{4}-\d\d-\d\d" title="[^"]+" tabindex="-1"><\/a>/g)].length, 30);
    });

    it('shows 90 and 365 days too, as far as the summary reaches', async () => {
      for (const period of [90, 365]) {
        const page = await browser.get(`/account/data?days=${period}`);
        assert.equal(page.status, 200);
        assert.match(page.body, new RegExp(`<a href="/account/data\\?days=${period}" aria-current="page">Last ${period} days</a>`));
        const { first, last } = datesOf(period);
        assertOverviewIsSummary(page.body, await summaryOf(token, first, last));
      }
      // Anything else asked for is the first period.
      assert.match((await browser.get('/account/data?days=7')).body, /<a href="\/account\/data\?days=30" aria-current="page">/);
    });

    it('draws each chart as SVG without a viewBox of its own, named and described, with the goal as a line', async () => {
      const page = (await browser.get('/account/data')).body;
      const charts = [...page.matchAll(/<svg class="data-chart" id="([a-z-]+)" role="img" aria-labelledby="\1-title \1-desc" width="100%" height="\d+">/g)].map((m) => m[1]);
      assert.deepEqual(charts, ['steps-chart', 'heart-chart', 'sleep-chart', 'weight-chart']);
      for (const id of charts) {
        const svg = new RegExp(`<svg class="data-chart" id="${id}"[\\s\\S]*?</figure>`).exec(page)![0];
        assert.ok(!/<svg class="data-chart"[^>]*viewBox/.test(svg), `${id}: its text keeps its size`);
        assert.ok(textOf(svg, `${id}-title`));
        assert.match(textOf(svg, `${id}-desc`)!, /table below the chart/);
        assert.ok(svg.includes('class="axis-label tick-y"'));
      }
      const goal = (await t.database.stores.users.findById(person.id))!.daily_step_goal;
      assert.match(page, /<line x1="0" y1="[\d.]+" x2="100%" y2="[\d.]+" class="rule"><\/line>/);
      assert.ok(page.includes(`the goal, ${Number(goal).toLocaleString('en')} steps</p>`));
      // Sleep is stacked by stage, each in its own colour.
      for (const stage of ['deep', 'light', 'rem', 'awake']) assert.match(page, new RegExp(`class="mark mark-${stage}"`));
    });

    it('tells a person without data how data arrives, instead of empty charts', async () => {
      const empty = await signedIn(t, await newAccount(t, 'Newcomer'));
      const page = await empty.get('/account/data');
      assert.equal(page.status, 200);
      const words = textOf(page.body, 'data-empty')!;
      assert.match(words, /You have no steps, heart rate, sleep or weight in Stride/);
      assert.match(words, /an app you connect uploads it/);
      assert.match(words, /imported into your account from a file/);
      assert.ok(!page.body.includes('<svg class="data-chart"'));
      const day = await empty.get(`/account/data/${datesOf(1).last}`);
      assert.equal(day.status, 200);
      assert.match(textOf(day.body, 'day-empty')!, /no steps, heart rate, sleep or weight on this day/);
      assert.ok(!day.body.includes('<svg class="data-chart"'));
    });
  });

  describe('a day', () => {
    it('shows the day minute by minute as the /v1 minute series answers, with the day\'s summary', async () => {
      // A day of 24 hours (the minute series answers at most a day): one without a clock change.
      let date = DateTime.fromSeconds(t.clock(), { zone: 'America/New_York' }).minus({ days: 4 }).startOf('day');
      while (date.plus({ days: 1 }).startOf('day').toSeconds() - date.toSeconds() !== 86_400) date = date.minus({ days: 1 });
      const start = date.toSeconds();
      const end = date.plus({ days: 1 }).startOf('day').toSeconds();
      const page = await browser.get(`/account/data/${date.toISODate()}`);
      assert.equal(page.status, 200);
      const series = (path: string) => t.app.inject({ url: `${path}?granularity=minute&start_time=${start}&end_time=${end}`, headers: bearer(token) }).then((r) => r.json());
      const steps = (await series('/v1/users/me/activities/steps')).steps as Array<{ start_time: number; value: number }>;
      const heart = (await series('/v1/users/me/heartrate/')).heartrate as Array<{ start_time: number; avg: number | null; min: number | null; max: number | null }>;
      assert.equal(steps.length, 1440);
      const shownSteps = tableRows(page.body, 'minute-steps-table', 'start');
      assert.deepEqual(
        [...shownSteps].map(([time, row]) => [Number(time), numberOf(row.steps!)]),
        steps.filter((minute) => minute.value > 0).map((minute) => [minute.start_time, minute.value]),
      );
      const shownHeart = tableRows(page.body, 'minute-heart-table', 'start');
      assert.ok(shownHeart.size > 1000);
      assert.deepEqual(
        [...shownHeart].map(([time, row]) => [Number(time), Number(row.avg), Number(row.min), Number(row.max)]),
        heart.filter((minute) => minute.avg !== null).map((minute) => [minute.start_time, minute.avg, minute.min, minute.max]),
      );
      const [summary] = await summaryOf(token, date.toISODate()!, date.toISODate()!);
      const figures = textOf(page.body, 'day-figures')!;
      assert.ok(figures.includes(`Steps${summary!.steps.toLocaleString('en')} of a goal of`), figures);
      assert.ok(figures.includes(`Resting heart rate${summary!.resting_heart_rate} bpm`), figures);
      assert.ok(figures.includes(`Sleep ending this day${Math.floor(summary!.minutes_asleep / 60)} h ${String(summary!.minutes_asleep % 60).padStart(2, '0')} min asleep`), figures);
      assert.ok(figures.includes(`Weight${summary!.weight} kg`), figures);
      assert.match(page.body, /<svg class="data-chart" id="minute-steps-chart"/);
      assert.match(page.body, /<svg class="data-chart" id="minute-heart-chart"/);
      // On to the days around it.
      assert.match(page.body, new RegExp(`<a href="/account/data/${date.minus({ days: 1 }).toISODate()}" rel="prev">`));
      assert.match(page.body, new RegExp(`<a href="/account/data/${date.plus({ days: 1 }).toISODate()}" rel="next">`));
    });

    it('is not found for anything but a date of the calendar up to today', async () => {
      const tomorrow = DateTime.fromSeconds(t.clock(), { zone: 'America/New_York' }).plus({ days: 1 }).toISODate()!;
      for (const date of ['2025-02-30', 'today', '2025-1-01', '%00', '2025-01-01%00', tomorrow, '20250101']) {
        const page = await browser.get(`/account/data/${date}`);
        assert.equal(page.status, 404, date);
        assert.match(page.body, /No such day/);
      }
    });
  });

  describe('whose data', () => {
    it('shows each person their own data only', async () => {
      const page = await (await signedIn(t, stranger)).get('/account/data');
      const today = DateTime.fromSeconds(t.clock(), { zone: 'Asia/Kolkata' });
      assertOverviewIsSummary(page.body, await summaryOf(strangerToken, today.minus({ days: 29 }).toISODate()!, today.toISODate()!));
      const strangerSteps = tableRows(page.body, 'steps-table', 'date');
      // A query cannot name anyone else: the page has no such parameter.
      const asked = await (await signedIn(t, stranger)).get(`/account/data?user=${person.id}&user_id=${person.id}`);
      assert.deepEqual(tableRows(asked.body, 'steps-table', 'date'), strangerSteps);
      assert.equal((await new Browser(t.app).get('/account/data')).status, 302, 'signed out: to the sign-in page');
      assert.equal((await new Browser(t.app).get(`/account/data/${today.toISODate()}`)).status, 302);
    });

    it('shows a developer each of their own test people, linked from the test people page', async () => {
      const list = await formPage(developer, '/dashboard/test-people');
      for (const one of mine) assert.ok(list.body.includes(`<a href="/dashboard/test-people/${one.id}/data" class="see-data">See data<span class="visually-hidden"> of ${one.displayName}</span></a>`), one.displayName);
      const runner = mine.find((one) => one.life === 'runner')!;
      const page = await developer.get(`/dashboard/test-people/${runner.id}/data`);
      assert.equal(page.status, 200);
      assert.ok(page.body.includes(`<h1>Data of ${runner.displayName}</h1>`));
      const runnerToken = (await issueAccessToken(t, runner, ALL_RESOURCE_SCOPES)).token;
      const today = DateTime.fromSeconds(t.clock(), { zone: runner.timezone });
      const days = await summaryOf(runnerToken, today.minus({ days: 29 }).toISODate()!, today.toISODate()!);
      assertOverviewIsSummary(page.body, days);
      const date = today.minus({ days: 1 }).toISODate()!;
      assert.match(page.body, new RegExp(`<a href="/dashboard/test-people/${runner.id}/data/${date}">`));
      const day = await developer.get(`/dashboard/test-people/${runner.id}/data/${date}`);
      assert.equal(day.status, 200);
      assert.ok(tableRows(day.body, 'minute-steps-table', 'start').size > 0);
    });

    it('does not find anyone else\'s test person, nor an id that cannot be one', async () => {
      const someone = mine[0]!.id;
      const ids = [theirs[0]!.id, person.id, stranger.id, f.developer.id, someone.toUpperCase(), `${someone}%00`, '%00', 'not-an-id', `${someone.slice(0, -1)}x`];
      for (const id of ids) {
        for (const path of [`/dashboard/test-people/${id}/data`, `/dashboard/test-people/${id}/data/${datesOf(1).last}`]) {
          const page = await developer.get(path);
          assert.equal(page.status, 404, path);
          assert.match(page.body, /There is no test person with this id among yours/);
        }
      }
      // Nor does a person who is not their developer, though the person exists.
      const other = await signedIn(t, stranger);
      assert.equal((await other.get(`/dashboard/test-people/${someone}/data`)).status, 404);
      assert.equal((await new Browser(t.app).get(`/dashboard/test-people/${someone}/data`)).status, 302, 'signed out: to the sign-in page');
    });
  });
});
