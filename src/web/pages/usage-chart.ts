/**
 * The geometry of the app page's requests-per-day chart (views/app-usage.eta): one bar per day,
 * stacked by outcome, on a y axis with round-numbered ticks from zero, and the first, middle and
 * last days named under the x axis. With no request in the window, the axes stay and the plot says
 * so, instead of an empty box.
 */

export const OUTCOMES = ['2xx', '4xx', '429', '5xx'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface ChartDay {
  day: string;
  byOutcome: Record<Outcome, number>;
  total: number;
}

/** The drawing's size in SVG units, and its plot area: room on the left for the tick labels. */
const WIDTH = 560;
const HEIGHT = 170;
const PLOT = { left: 58, right: WIDTH - 12, top: 12, bottom: 134 };
const BAR_GAP = 4;

/** A round step (1, 2 or 5 times a power of ten) that splits `most` into at most four parts. */
export function tickStep(most: number): number {
  if (most <= 4) return 1;
  const rough = most / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough)!;
}

export function usageChart(days: ChartDay[]) {
  const most = Math.max(0, ...days.map((d) => d.total));
  const step = tickStep(most);
  const top = Math.max(step, Math.ceil(most / step) * step);
  const plotHeight = PLOT.bottom - PLOT.top;
  const y = (value: number) => PLOT.bottom - (value / top) * plotHeight;
  const slot = (PLOT.right - PLOT.left) / days.length;
  const barWidth = Math.max(2, slot - BAR_GAP);

  const bars = days.flatMap((d, i) => {
    let base = 0;
    return OUTCOMES.filter((o) => d.byOutcome[o] > 0).map((outcome) => {
      const value = d.byOutcome[outcome];
      // At least one unit tall, so that a single request among thousands still shows.
      const height = Math.max(1, round(y(base) - y(base + value)));
      const bar = { x: round(PLOT.left + i * slot + BAR_GAP / 2), y: round(y(base)) - height, width: round(barWidth), height, outcome, title: `${d.day}: ${value} ${outcome}` };
      base += value;
      return bar;
    });
  });
  const yTicks = Array.from({ length: top / step + 1 }, (_, i) => ({ y: round(y(i * step)), label: (i * step).toLocaleString('en') }));
  const middle = Math.floor(days.length / 2);
  const xCenter = (i: number) => round(PLOT.left + i * slot + slot / 2);
  const xLabels = [
    { x: PLOT.left, label: days[0]?.day ?? '', anchor: 'start' },
    { x: xCenter(middle), label: days[middle]?.day ?? '', anchor: 'middle' },
    { x: PLOT.right, label: days[days.length - 1]?.day ?? '', anchor: 'end' },
  ];
  return {
    width: WIDTH,
    height: HEIGHT,
    plot: PLOT,
    labelY: HEIGHT - 16,
    empty: most === 0,
    most,
    bars,
    yTicks,
    xTicks: days.map((_, i) => xCenter(i)),
    xLabels,
  };
}

const round = (value: number) => Math.round(value * 10) / 10;
