/**
 * The geometry of the charts on the "Your data" pages (views/data-chart.eta draws them). Like the
 * app page's usage chart (usage-chart.ts, drawn by these same functions) they are inline SVG drawn on the server, with a y axis of
 * round ticks, a few dates under the x axis and the numbers in a table beside. Unlike it they have
 * no viewBox of their own: one SVG unit is one CSS pixel, so their text keeps its CSS size at any
 * width instead of shrinking with a phone's screen. Heights are pixels; across, the marks are drawn
 * in a nested SVG whose viewBox has one unit per column (a day, a minute) and is stretched to the
 * chart's width, and what must keep its shape — labels, dots, the goal's line — is placed in
 * percentages of the width.
 */

/** The drawing's height and its plot's, in CSS pixels; the labels of the y axis sit left of the SVG (stride.css .chart). */
const HEIGHT = 196;
const PLOT_TOP = 10;
const PLOT_BOTTOM = 164;
const LABEL_Y = 184;

export interface XLabel {
  /** A percentage of the width. */
  x: string;
  label: string;
  anchor: 'start' | 'middle' | 'end';
}

/** A mark of the nested SVG, in its units (columns across, pixels down), as one path per kind. */
export interface Marks {
  kind: string;
  d: string;
}

export interface Chart {
  height: number;
  plot: { top: number; bottom: number; height: number };
  /** The nested SVG's width in its units: one per column. */
  columns: number;
  yTicks: Array<{ y: number; label: string }>;
  xLabels: XLabel[];
  xTicks: string[];
  labelY: number;
  bars: Marks[];
  lines: Marks[];
  dots: Array<{ cx: string; cy: number; kind: string }>;
  /** A level drawn across the plot (the step goal); the legend under the chart names it. */
  rule: { y: number } | null;
}

/** A round step (1, 2 or 5 times a power of ten) that splits `most` into at most four parts. */
export function tickStep(most: number): number {
  if (most <= 4) return 1;
  const rough = most / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough)!;
}

/** The values the y axis spans, and its step. */
interface Scale {
  low: number;
  high: number;
  step: number;
}

/** From zero to a round top at or above `most`. */
function scaleFromZero(most: number): Scale {
  const step = tickStep(most);
  return { low: 0, high: Math.max(step, Math.ceil(most / step) * step), step };
}

/**
 * Round values around [least, most], at least `minSpan` apart: a resting heart rate that moves
 * between 58 and 61 is drawn on 55–65, not as a cliff from the plot's top to its bottom.
 */
function scaleAround(least: number, most: number, minSpan: number): Scale {
  const middle = (least + most) / 2;
  const lowest = Math.min(least, middle - minSpan / 2);
  const highest = Math.max(most, middle + minSpan / 2);
  const step = tickStep(highest - lowest);
  const low = Math.floor(lowest / step) * step;
  return { low, high: Math.max(low + step, Math.ceil(highest / step) * step), step };
}

const round = (value: number, places = 1) => Math.round(value * 10 ** places) / 10 ** places;
const percent = (value: number) => `${round(value * 100, 2)}%`;

/** Where each column's marks go, and what a chart of `columns` columns on `scale` has in common. */
function frame(columns: number, scale: Scale, xLabels: XLabel[], xTicks: string[]) {
  const plotHeight = PLOT_BOTTOM - PLOT_TOP;
  /** A value's height from the nested SVG's top (which sits at the plot's top). */
  const y = (value: number) => round(plotHeight - ((value - scale.low) / (scale.high - scale.low)) * plotHeight);
  const count = Math.round((scale.high - scale.low) / scale.step);
  const yTicks = Array.from({ length: count + 1 }, (_, i) => {
    const value = scale.low + i * scale.step;
    return { y: round(PLOT_TOP + y(value)), label: value.toLocaleString('en') };
  });
  const chart: Chart = {
    height: HEIGHT,
    plot: { top: PLOT_TOP, bottom: PLOT_BOTTOM, height: plotHeight },
    columns: Math.max(1, columns),
    yTicks,
    xLabels,
    xTicks,
    labelY: LABEL_Y,
    bars: [],
    lines: [],
    dots: [],
    rule: null,
  };
  return { chart, y, plotHeight };
}

/** The middle of column `index` of `columns`, as a percentage of the width. */
export const columnCentre = (index: number, columns: number) => percent((index + 0.5) / columns);

/** The first, middle and last columns' labels. */
export function endsAndMiddle(labels: readonly string[]): XLabel[] {
  if (labels.length === 0) return [];
  const middle = Math.floor(labels.length / 2);
  const shown: XLabel[] = [{ x: '0%', label: labels[0]!, anchor: 'start' }];
  if (labels.length > 2) shown.push({ x: columnCentre(middle, labels.length), label: labels[middle]!, anchor: 'middle' });
  if (labels.length > 1) shown.push({ x: '100%', label: labels[labels.length - 1]!, anchor: 'end' });
  return shown;
}

/** A column of a bar chart: its parts, stacked from the bottom in this order, each of a kind (its colour). */
export type BarColumn = ReadonlyArray<{ kind: string; value: number }>;

/** Room between bars, as a share of a column: none once bars are thinner than a pixel or two. */
function barGap(columns: number): number {
  return columns <= 31 ? 0.3 : columns <= 92 ? 0.2 : 0;
}

/**
 * Bars from zero, stacked by kind; `rule`: a level drawn across (the step goal), which the axis
 * reaches too. A part is at least a pixel tall, so that one step among thousands still shows.
 */
export function barChart(columns: readonly BarColumn[], labels: { x: XLabel[]; ticks?: string[] }, rule?: { value: number }): Chart {
  const most = Math.max(0, rule?.value ?? 0, ...columns.map((parts) => parts.reduce((sum, part) => sum + part.value, 0)));
  const { chart, y, plotHeight } = frame(columns.length, scaleFromZero(most), labels.x, labels.ticks ?? []);
  const gap = barGap(columns.length);
  const paths = new Map<string, string[]>();
  columns.forEach((parts, index) => {
    let base = 0;
    let top = plotHeight;
    for (const { kind, value } of parts) {
      if (value <= 0) continue;
      base += value;
      const height = Math.max(1, round(top - y(base)));
      const x = round(index + gap / 2, 2);
      const path = paths.get(kind) ?? [];
      path.push(`M${x} ${round(top - height)}h${round(1 - gap, 2)}v${height}h${-round(1 - gap, 2)}z`);
      paths.set(kind, path);
      top = round(top - height);
    }
  });
  chart.bars = [...paths].map(([kind, d]) => ({ kind, d: d.join('') }));
  if (rule && rule.value > 0) chart.rule = { y: round(PLOT_TOP + y(rule.value)) };
  return chart;
}

/**
 * A line through the columns that have a value, on an axis around them (at least `minSpan` apart);
 * columns up to `bridge` apart are joined (a weight measured once a week), farther ones leave a
 * gap. With at most `dotsUpTo` values each gets a dot, and a value alone between gaps always does.
 */
export function lineChart(
  values: ReadonlyArray<number | null>,
  labels: { x: XLabel[]; ticks?: string[] },
  options: { kind: string; minSpan: number; bridge: number; dotsUpTo: number },
): Chart {
  const present = values.flatMap((value, index) => (value === null ? [] : [{ value, index }]));
  const least = Math.min(...present.map((p) => p.value));
  const most = Math.max(...present.map((p) => p.value));
  const scale = present.length === 0 ? scaleFromZero(0) : scaleAround(least, most, options.minSpan);
  const { chart, y } = frame(values.length, scale, labels.x, labels.ticks ?? []);
  const segments: string[] = [];
  present.forEach((point, i) => {
    const joined = i > 0 && point.index - present[i - 1]!.index <= options.bridge;
    segments.push(`${joined ? 'L' : 'M'}${round(point.index + 0.5, 2)} ${y(point.value)}`);
  });
  if (segments.length > 0) chart.lines = [{ kind: options.kind, d: segments.join('') }];
  const alone = (i: number) =>
    (i === 0 || present[i]!.index - present[i - 1]!.index > options.bridge) && (i === present.length - 1 || present[i + 1]!.index - present[i]!.index > options.bridge);
  chart.dots = present
    .filter((_, i) => present.length <= options.dotsUpTo || alone(i))
    .map((point) => ({ cx: columnCentre(point.index, values.length), cy: round(PLOT_TOP + y(point.value)), kind: options.kind }));
  return chart;
}
