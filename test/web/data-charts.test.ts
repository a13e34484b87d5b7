/** The geometry of the "Your data" charts: stacked bars from zero under a goal, lines with gaps, dots where a line cannot show a value. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { barChart, endsAndMiddle, lineChart } from '../../src/web/pages/data-charts.js';

const labels = (count: number) => ({ x: endsAndMiddle(Array.from({ length: count }, (_, i) => `day ${i + 1}`)) });

/** The rectangles of a bars path: [x, y, width, height] each. */
const rectangles = (d: string) => [...d.matchAll(/M([\d.]+) ([\d.]+)h([\d.]+)v([\d.]+)h-[\d.]+z/g)].map((m) => m.slice(1).map(Number));

describe('the charts of your data', () => {
  it('stacks bars from zero on round ticks that reach the goal, the goal drawn across', () => {
    const chart = barChart(
      [
        [{ kind: 'below', value: 4000 }],
        [{ kind: 'met', value: 12_000 }],
        [{ kind: 'below', value: 0 }],
      ],
      labels(3),
      { value: 15_000 },
    );
    assert.deepEqual(chart.yTicks.map((tick) => tick.label), ['0', '5,000', '10,000', '15,000']);
    assert.equal(chart.columns, 3);
    const [below] = chart.bars.filter((bars) => bars.kind === 'below').map((bars) => rectangles(bars.d));
    const [met] = chart.bars.filter((bars) => bars.kind === 'met').map((bars) => rectangles(bars.d));
    assert.equal(below!.length, 1, 'a day without steps has no bar');
    assert.ok(Math.abs(met![0]![3]! - (12 / 15) * chart.plot.height) <= 0.2, '12,000 of 15,000 is four fifths of the plot');
    assert.ok(Math.abs(met![0]![1]! + met![0]![3]! - chart.plot.height) <= 0.2, 'the bar stands on the x axis');
    assert.equal(chart.rule!.y, chart.plot.top, 'the goal is the top tick');
    assert.deepEqual(chart.xLabels.map((label) => [label.x, label.anchor]), [['0%', 'start'], ['50%', 'middle'], ['100%', 'end']]);
  });

  it('puts each stage of a night on the one below it', () => {
    const chart = barChart([[{ kind: 'deep', value: 1.5 }, { kind: 'light', value: 4 }, { kind: 'rem', value: 1.5 }, { kind: 'awake', value: 0.5 }]], labels(1));
    const parts = Object.fromEntries(chart.bars.map((bars) => [bars.kind, rectangles(bars.d)[0]!]));
    assert.deepEqual(Object.keys(parts), ['deep', 'light', 'rem', 'awake']);
    for (const [lower, upper] of [['deep', 'light'], ['light', 'rem'], ['rem', 'awake']] as const) {
      assert.ok(Math.abs(parts[upper]![1]! + parts[upper]![3]! - parts[lower]![1]!) <= 0.2, `${upper} sits on ${lower}`);
    }
    assert.deepEqual(chart.yTicks.map((tick) => tick.label), ['0', '2', '4', '6', '8']);
  });

  it('shows the smallest part as a pixel at least', () => {
    const chart = barChart([[{ kind: 'steps', value: 1 }], [{ kind: 'steps', value: 100_000 }]], labels(2));
    assert.equal(rectangles(chart.bars[0]!.d)[0]![3], 1);
  });

  it('draws a line on an axis around its values, leaving a gap where days are missing', () => {
    const chart = lineChart([58, 59, null, null, 61, 60], labels(6), { kind: 'heart', minSpan: 10, bridge: 1, dotsUpTo: 31 });
    // 58 to 61 on at least 10 beats: 55–65 around them, on round ticks.
    assert.deepEqual(chart.yTicks.map((tick) => tick.label), ['50', '55', '60', '65']);
    assert.equal(chart.lines[0]!.d.match(/M/g)!.length, 2, 'two runs');
    assert.equal(chart.dots.length, 4);
    assert.equal(chart.dots[0]!.cx, '8.33%');
  });

  it('joins measurements across the days between, and dots a value that is alone', () => {
    const weights = Array.from({ length: 90 }, (_, i) => (i % 7 === 0 ? 74 + i / 100 : null));
    const joined = lineChart(weights, labels(90), { kind: 'weight', minSpan: 2, bridge: 90, dotsUpTo: 10 });
    assert.equal(joined.lines[0]!.d.match(/M/g)!.length, 1, 'one line through every week');
    assert.deepEqual(joined.dots, [], 'too many values for dots: the line shows them');
    const alone = lineChart([null, null, 70, null, 71, 72], labels(6), { kind: 'heart', minSpan: 10, bridge: 1, dotsUpTo: 0 });
    assert.deepEqual(alone.dots.map((dot) => dot.cx), ['41.67%'], 'the day between gaps');
    assert.deepEqual(alone.yTicks.map((tick) => tick.label), ['65', '70', '75', '80']);
  });
});
