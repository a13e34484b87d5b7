/**
 * The soak's minutes and its verdict: what `npm run soak` measured per minute of mixed load, and
 * whether the server held steady (no 5xx, memory flat after the first minute, latency flat).
 */
import { percentile } from './loads.js';
import type { Check } from './report.js';

export interface MinuteSample {
  /** Request latencies of the minute, in milliseconds, any order. */
  latenciesMs: number[];
  /** The same latencies by kind of request (refresh, upload…), to see where a tail comes from. */
  byKind: Record<string, number[]>;
  /** Answers with a 5xx status. */
  serverErrors: number;
  /** Answers that were not what the client expected (a refused refresh, a failed upload…). */
  unexpected: number;
  /** The server's resident memory at each sample of the minute, in MB. */
  rssMb: number[];
}

export interface MinuteSummary {
  minute: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** RSS at the minute's last sample, and the minute's peak, in MB. */
  rssEndMb: number;
  rssPeakMb: number;
  serverErrors: number;
  unexpected: number;
  /** p99 of each kind of request, in milliseconds. */
  p99ByKindMs: Record<string, number>;
}

export function summarizeMinute(index: number, sample: MinuteSample, seconds = 60): MinuteSummary {
  const sorted = [...sample.latenciesMs].sort((a, b) => a - b);
  return {
    minute: index + 1,
    requests: sorted.length,
    perSecond: sorted.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    rssEndMb: sample.rssMb.at(-1) ?? NaN,
    rssPeakMb: sample.rssMb.length > 0 ? Math.max(...sample.rssMb) : NaN,
    serverErrors: sample.serverErrors,
    unexpected: sample.unexpected,
    p99ByKindMs: Object.fromEntries(
      Object.entries(sample.byKind).map(([kind, latencies]) => [kind, percentile([...latencies].sort((a, b) => a - b), 99)]),
    ),
  };
}

/** Memory may grow this much after the first minute (warm-up: caches, JIT, pools). */
export const MAX_RSS_GROWTH = 0.1;
/** The last minute's p99 may be this many times the second's. */
export const MAX_P99_DRIFT = 1.5;

/**
 * The pass rules: zero 5xx and zero unexpected answers over the whole run; no later minute's peak
 * RSS more than 10 % above the first minute's peak; the last minute's p99 within 1.5× the second
 * minute's (the first is warm-up).
 */
export function soakChecks(minutes: readonly MinuteSummary[]): Check[] {
  const serverErrors = minutes.reduce((sum, m) => sum + m.serverErrors, 0);
  const unexpected = minutes.reduce((sum, m) => sum + m.unexpected, 0);
  const checks: Check[] = [
    { target: 'no 5xx answer', pass: serverErrors === 0, actual: `${serverErrors} answers with a 5xx status` },
    { target: 'every answer as expected', pass: unexpected === 0, actual: `${unexpected} unexpected answers` },
  ];
  if (minutes.length < 3) {
    checks.push({ target: 'at least three minutes', pass: false, actual: `${minutes.length} minutes measured` });
    return checks;
  }
  // Peak against peak: within a minute RSS swings by a young generation's worth (GC's sawtooth),
  // so the first minute's peak, not one sample of it, is what later minutes must stay near.
  const baseline = minutes[0]!.rssPeakMb;
  const laterPeak = Math.max(...minutes.slice(1).map((m) => m.rssPeakMb));
  const growth = laterPeak / baseline - 1;
  checks.push({
    target: `RSS growth after the first minute ≤ ${MAX_RSS_GROWTH * 100} %`,
    pass: growth <= MAX_RSS_GROWTH,
    actual: `peak ${baseline.toFixed(1)} MB in the first minute → ${laterPeak.toFixed(1)} MB later (${(growth * 100).toFixed(1)} %)`,
  });
  const second = minutes[1]!.p99Ms;
  const last = minutes.at(-1)!.p99Ms;
  checks.push({
    target: `last minute's p99 ≤ ${MAX_P99_DRIFT}× the second's`,
    pass: last <= second * MAX_P99_DRIFT,
    actual: `${second.toFixed(2)} ms → ${last.toFixed(2)} ms (${(last / second).toFixed(2)}×)`,
  });
  return checks;
}
