/** The app page's usage chart: a y axis of round ticks from zero that holds the busiest day, and an empty state. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tickStep, usageChart, type ChartDay } from '../../src/web/pages/usage-chart.js';
import { createFixture, createOAuthTestApp, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { signedIn } from './pages-support.js';

cheapPasswordHashing();

const day = (i: number, counts: Partial<ChartDay['byOutcome']> = {}): ChartDay => {
  const byOutcome = { '2xx': 0, '4xx': 0, '429': 0, '5xx': 0, ...counts };
  return { day: `2026-11-${String(i + 1).padStart(2, '0')}`, byOutcome, total: Object.values(byOutcome).reduce((a, b) => a + b, 0) };
};

describe('usage chart', () => {
  it('steps its ticks by 1, 2 or 5 times a power of ten, at most four steps to the top', () => {
    assert.deepEqual([0, 1, 4, 5, 9, 17, 40, 41, 999, 1234].map(tickStep), [1, 1, 1, 2, 5, 5, 10, 20, 500, 500]);
  });

  it('labels its y axis from zero to a round top above the busiest day, and stacks each day by outcome', () => {
    const days = Array.from({ length: 30 }, (_, i) => day(i, i === 29 ? { '2xx': 30, '4xx': 7 } : i === 3 ? { '2xx': 1 } : {}));
    const chart = usageChart(days);
    assert.equal(chart.empty, false);
    assert.deepEqual(chart.yTicks.map((tick) => tick.label), ['0', '10', '20', '30', '40']);
    // Ticks climb evenly from the x axis.
    assert.equal(chart.yTicks[0]!.y, chart.plot.bottom);
    assert.equal(chart.yTicks[4]!.y, chart.plot.top);
    // One path per outcome, in the nested SVG's units: a column per day across, pixels down.
    const parts = (kind: string) => [...chart.bars.find((bars) => bars.kind === kind)!.d.matchAll(/M([\d.]+) ([\d.]+)h[\d.]+v([\d.]+)/g)]
      .map((m) => ({ column: Math.floor(Number(m[1])), top: Number(m[2]), height: Number(m[3]) }));
    assert.deepEqual(chart.bars.map((bars) => bars.kind), ['2xx', '4xx']);
    const [quiet, busy] = parts('2xx');
    assert.equal(busy!.column, 29);
    assert.ok(Math.abs(busy!.height - 0.75 * chart.plot.height) <= 0.2, '30 of 40 is three quarters of the plot');
    const [error] = parts('4xx');
    assert.ok(Math.abs(error!.top + error!.height - busy!.top) <= 0.2, 'the 4xx part sits on the 2xx part');
    // A day with one request still shows a bar.
    assert.equal(quiet!.column, 3);
    assert.ok(quiet!.height >= 1);
    assert.deepEqual(chart.xLabels.map((label) => label.label), ['2026-11-01', '2026-11-16', '2026-11-30']);
    assert.equal(chart.columns, 30);
  });

  it('keeps its axes with no request, and says so', () => {
    const chart = usageChart(Array.from({ length: 30 }, (_, i) => day(i)));
    assert.equal(chart.empty, true);
    assert.deepEqual(chart.bars, []);
    assert.deepEqual(chart.yTicks.map((tick) => tick.label), ['0', '1']);
  });
});

forEachDialect('usage chart on the app page', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('shows an app without requests as an empty chart with its axes, not a blank box', async () => {
    const page = await (await signedIn(t, f.developer)).get(`/dashboard/apps/${f.app.clientId}`);
    assert.equal(page.status, 200);
    const svg = /<svg class="data-chart usage-chart"[\s\S]*?<\/svg>\s*<\/div>/.exec(page.body)![0];
    assert.match(svg, /id="usage-chart-empty"[^>]*>No requests in these 30 days yet</);
    assert.match(svg, /<desc id="usage-chart-desc">No requests from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d\.<\/desc>/);
    assert.deepEqual([...svg.matchAll(/class="axis-label tick-y"[^>]*>([^<]*)</g)].map((m) => m[1]), ['0', '1']);
    assert.equal([...svg.matchAll(/class="mark /g)].length, 0);
    // No viewBox of its own: its text keeps its CSS size on a phone (the nested plot's is stretched, and holds no text).
    assert.doesNotMatch(/<svg class="data-chart usage-chart"[^>]*>/.exec(svg)![0], /viewBox/);
  });
});
