/**
 * What the app page shows of an app's use (docs/web.md, "App usage"): requests per day for the last
 * 30 days by endpoint group and outcome, drawn as a bar chart (usage-chart.ts, the numbers also
 * in a table), tokens issued and refreshed, people connecting and leaving, how much of its rate limit
 * one grant spent at most, and the last errors.
 */
import type { Config } from '../../config.js';
import type { AppUsage } from '../../store/usage.js';
import { OUTCOMES, usageChart } from './usage-chart.js';

export const USAGE_DAYS = 30;
const GROUPS = ['api_read', 'api_write', 'token'] as const;

const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** The first day shown, and its start in Unix seconds. */
export function usageWindow(now: number): { since: string; sinceSeconds: number } {
  const sinceSeconds = Math.floor(now / 86400) * 86400 - (USAGE_DAYS - 1) * 86400;
  return { since: dayOf(sinceSeconds), sinceSeconds };
}

/** "a minute", "15 minutes", "10 seconds": the rate limit's window in words. */
function windowText(ms: number): string {
  if (ms === 60_000) return 'a minute';
  return ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${ms / 1000} seconds`;
}

export function usageView(usage: AppUsage, config: Config, now: number) {
  const { sinceSeconds } = usageWindow(now);
  const days = Array.from({ length: USAGE_DAYS }, (_, i) => {
    const day = dayOf(sinceSeconds + i * 86400);
    const counts = usage.days.get(day) ?? new Map<string, number>();
    const get = (metric: string) => counts.get(metric) ?? 0;
    const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, GROUPS.reduce((sum, g) => sum + get(`${g}.${o}`), 0)])) as Record<(typeof OUTCOMES)[number], number>;
    const byGroup = Object.fromEntries(GROUPS.map((g) => [g, OUTCOMES.reduce((sum, o) => sum + get(`${g}.${o}`), 0)])) as Record<(typeof GROUPS)[number], number>;
    const connections = usage.connections.get(day) ?? { created: 0, revoked: 0 };
    return {
      day,
      byOutcome,
      byGroup,
      total: OUTCOMES.reduce((sum, o) => sum + byOutcome[o], 0),
      issued: get('tokens.issued'),
      refreshed: get('tokens.refreshed'),
      busiestWindow: get('api.busiest_window'),
      connected: connections.created,
      left: connections.revoked,
    };
  });
  const limit = config.rateLimits.api;
  const busiest = Math.max(0, ...days.map((d) => d.busiestWindow));
  const sum = (pick: (d: (typeof days)[number]) => number) => days.reduce((total, d) => total + pick(d), 0);
  return {
    days: [...days].reverse(),
    chart: usageChart(days),
    first: days[0]!.day,
    last: days[days.length - 1]!.day,
    totals: { requests: sum((d) => d.total), issued: sum((d) => d.issued), refreshed: sum((d) => d.refreshed), limited: sum((d) => d.byOutcome['429']), connected: sum((d) => d.connected), left: sum((d) => d.left) },
    limit: limit === null ? null : { max: limit.max, window: windowText(limit.windowMs), busiest, share: Math.round((busiest / limit.max) * 100) },
    errors: usage.errors.map((e) => ({ ...e, when: new Date(e.at * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' })),
  };
}
