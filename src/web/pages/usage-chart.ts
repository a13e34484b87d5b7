/**
 * The app page's requests-per-day chart (views/app-usage.eta): one bar per day, stacked by
 * outcome, on a y axis with round-numbered ticks from zero, and the first, middle and last days
 * named under the x axis. It is drawn as the "Your data" charts are (data-charts.ts,
 * views/data-chart.eta): no viewBox of its own, so its labels keep their CSS size on a phone's
 * screen instead of shrinking with the drawing. With no request in the window, the axes stay and
 * the plot says so, instead of an empty box.
 */
import { barChart, endsAndMiddle, tickStep, type Chart } from './data-charts.js';

export { tickStep };

export const OUTCOMES = ['2xx', '4xx', '429', '5xx'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface ChartDay {
  day: string;
  byOutcome: Record<Outcome, number>;
  total: number;
}

export interface UsageChart extends Chart {
  empty: boolean;
  /** The busiest day's requests. */
  most: number;
}

export function usageChart(days: ChartDay[]): UsageChart {
  const most = Math.max(0, ...days.map((d) => d.total));
  const columns = days.map((d) => OUTCOMES.map((outcome) => ({ kind: outcome, value: d.byOutcome[outcome] })));
  const chart = barChart(columns, { x: endsAndMiddle(days.map((d) => d.day)) });
  return { ...chart, empty: most === 0, most };
}
