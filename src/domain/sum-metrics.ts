/**
 * The minute metrics whose buckets hold sums (docs/api.md, "Distance and calories"): steps,
 * distance and calories, each with its path, unit and range. One route factory serves them all
 * (api/sum-metrics.ts).
 */
import { SERIES_METRICS, type SumMetric } from '../store/series-writer.js';
import { MAX_STEPS_PER_MINUTE } from './step-samples.js';

export interface SumMetricDefinition {
  metric: SumMetric;
  /** The collection, with its final slash (also served without). */
  path: string;
  /** The OpenAPI tag. */
  tag: string;
  unit: string;
  /** The largest value of a minute. */
  maxPerMinute: number;
  /** Decimals a value may have; the store keeps 10^decimals units of it as one integer. */
  decimals: 0 | 1;
}

const decimalsOf = (metric: SumMetric): 0 | 1 => (SERIES_METRICS[metric].scale === 10 ? 1 : 0);

export const SUM_METRICS: Readonly<Record<SumMetric, SumMetricDefinition>> = {
  steps: { metric: 'steps', path: '/v1/users/me/activities/steps/', tag: 'Steps', unit: 'steps', maxPerMinute: MAX_STEPS_PER_MINUTE, decimals: decimalsOf('steps') },
  distance: { metric: 'distance', path: '/v1/users/me/activities/distance/', tag: 'Distance', unit: 'metres', maxPerMinute: 2000, decimals: decimalsOf('distance') },
  calories: { metric: 'calories', path: '/v1/users/me/activities/calories/', tag: 'Calories', unit: 'kcal', maxPerMinute: 100, decimals: decimalsOf('calories') },
};
