/**
 * The metrics of the series store (`series_days`: one packed row per person, metric and UTC day),
 * each declared once with its storage choices. The row type (schema.ts), the bits of `events.types`
 * (event-rows.ts), the day readers and stores (store/series-days.ts, store/stores.ts), the events and
 * who hears them (store/events.ts, store/fitbit-notifications.ts) and the routes of the sum metrics
 * (domain/sum-metrics.ts) are derived from this table: a new minute metric is one entry here, its
 * route's entry in domain/sum-metrics.ts and, for a new kind of metric, its accumulator
 * (docs/adding-a-metric.md).
 */

/** How a metric's days are summed into buckets, by an accumulator of store/ (store/stores.ts picks it). */
export type SeriesAccumulator =
  /** Sums of its own minutes (store/series-sums.ts, createSeriesSums). */
  | 'sums'
  /** Sums with the distance derived from steps (store/series-sums.ts, createDistanceSums). */
  | 'derived-distance'
  /** Count, sum, min, max and the resting heart rate (store/heart-rate-series.ts). */
  | 'heart-rate';

export interface SeriesMetricDeclaration {
  /**
   * How a day's minutes are packed: `minute-values` (codec/minute-values.ts: each minute an integer
   * or absent, `total` and `hours` plain sums) or `heart-rate-minutes` (codec/heart-rate-minutes.ts:
   * aggregates, a 58-bit `total` read exactly); written by store/series-writer.ts.
   */
  codec: 'minute-values' | 'heart-rate-minutes';
  /** Stored integers per unit of the API: 1, or 10 to keep one decimal (tenths of a kcal). */
  scale: number;
  /** The event its writes record (docs/webhooks.md). */
  event: `${string}.updated`;
  /**
   * The bit of `event` in `events.types` (event-rows.ts). Stored: never renumbered; a new metric
   * takes the next free one (the bits of every event type are 0 to n−1, each once).
   */
  eventBit: number;
  /** The scope whose grants hear of its events (and read it). */
  readScope: 'read_activity' | 'read_heartrate';
  accumulator: SeriesAccumulator;
}

export const SERIES_METRICS = {
  steps: { codec: 'minute-values', scale: 1, event: 'steps.updated', eventBit: 0, readScope: 'read_activity', accumulator: 'sums' },
  distance: { codec: 'minute-values', scale: 1, event: 'distance.updated', eventBit: 1, readScope: 'read_activity', accumulator: 'derived-distance' },
  calories: { codec: 'minute-values', scale: 10, event: 'calories.updated', eventBit: 2, readScope: 'read_activity', accumulator: 'sums' },
  heartrate: { codec: 'heart-rate-minutes', scale: 1, event: 'heartrate.updated', eventBit: 3, readScope: 'read_heartrate', accumulator: 'heart-rate' },
} as const satisfies Readonly<Record<string, SeriesMetricDeclaration>>;

/** The `metric` of a row of `series_days`. */
export type SeriesMetric = keyof typeof SERIES_METRICS;

/** The minute metrics whose minutes are plain integers and whose buckets hold sums (docs/api.md). */
export type SumMetric = { [M in SeriesMetric]: (typeof SERIES_METRICS)[M]['codec'] extends 'minute-values' ? M : never }[SeriesMetric];

/** The event of a series metric's writes. */
export type SeriesEventType = (typeof SERIES_METRICS)[SeriesMetric]['event'];

export const SERIES_METRIC_NAMES = Object.keys(SERIES_METRICS) as SeriesMetric[];

/** The sum metrics, in their order of declaration. */
export const SUM_METRIC_NAMES = SERIES_METRIC_NAMES.filter((metric): metric is SumMetric => SERIES_METRICS[metric].codec === 'minute-values');

/** The declaration of `metric`. */
export const declarationOf = (metric: SeriesMetric): SeriesMetricDeclaration => SERIES_METRICS[metric];
