/**
 * The bucket plan of a series request, kept (decision 0005; switch `bucket-plans`,
 * src/speed-switches.ts): a plan depends only on the zone, granularity and range, which apps ask
 * for again and again for many users ("the last 7 days" in a zone), so plans are shared between
 * requests and readers of one metric; a plan is never modified.
 *
 * What it saves: walking the zone's offsets and the range's boundaries for every request (a day
 * by minute is 1,441 boundaries). Needed by the series rows of `npm run bench` (2, 8, 9, 16, 17).
 * Kept answers and memos keyed by a plan or its boundaries (./heart-rate-answers.ts,
 * ./heart-rate-series-json.ts, ./local-dates.ts) are found again only through a kept plan, so
 * switching plans off switches those off in effect too. The plain path plans every request;
 * test/fuzz/speed-caches shows the plans are the same.
 */
import { planBuckets, type BucketPlan, type Granularity } from '../calendar/step-buckets.js';
import { isOn, keptBy } from '../speed-switches.js';

/** What a plan is made of: a series request's zone, granularity and range. */
export interface PlanRequest {
  timezone: string;
  granularity: Granularity;
  start: number;
  end: number;
}

/** Plans a series reader keeps; when there are more, it starts over. */
const MAX_KEPT_PLANS = 256;

/** The plain path: a new plan for every request. */
export const planOf = (request: PlanRequest): BucketPlan => planBuckets(request.timezone, request.granularity, request.start, request.end);

/** Plans kept for one reader (or the plain path when STRIDE_PLAIN switches them off). */
export function keptPlans(): (request: PlanRequest) => BucketPlan {
  if (!isOn('bucket-plans')) return planOf;
  return keptBy(MAX_KEPT_PLANS, (request: PlanRequest) => `${request.timezone} ${request.granularity} ${request.start} ${request.end}`, planOf);
}
