import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { soakChecks, summarizeMinute, type MinuteSample } from '../../../bench/lib/soak-report.js';

/** A minute of `count` answers taking 1..count ms (p99 = 0.99 × count), at RSS `rss` MB. */
function minute(count: number, rss: number[], extra: Partial<MinuteSample> = {}): MinuteSample {
  const latenciesMs = Array.from({ length: count }, (_, i) => count - i);
  return { latenciesMs, byKind: { all: latenciesMs }, serverErrors: 0, unexpected: 0, rssMb: rss, ...extra };
}

/** Whether the check whose target matches `target` passed for these minutes. */
function passes(samples: MinuteSample[], target: RegExp): boolean {
  const check = soakChecks(samples.map((m, i) => summarizeMinute(i, m))).find((c) => target.test(c.target));
  assert.ok(check, `no check matches ${target}`);
  return check.pass;
}

describe('soak minutes', () => {
  it('summarises a minute: rate, percentiles of unsorted latencies, RSS at the end and at the peak', () => {
    const summary = summarizeMinute(0, minute(1000, [100, 140, 120]), 50);
    assert.equal(summary.minute, 1);
    assert.equal(summary.perSecond, 20);
    assert.equal(summary.p50Ms, 500);
    assert.equal(summary.p99Ms, 990);
    assert.equal(summary.rssEndMb, 120);
    assert.equal(summary.rssPeakMb, 140);
  });
});

describe('soak verdict', () => {
  it('passes a steady run', () => {
    const checks = soakChecks([minute(100, [100]), minute(100, [104]), minute(100, [109])].map((m, i) => summarizeMinute(i, m)));
    assert.deepEqual(checks.map((c) => c.pass), [true, true, true, true]);
  });

  it('fails on any 5xx or unexpected answer', () => {
    const run = [minute(100, [100]), minute(100, [100], { serverErrors: 1 }), minute(100, [100], { unexpected: 2 })];
    assert.equal(passes(run, /5xx/), false);
    assert.equal(passes(run, /as expected/), false);
  });

  it('fails when memory grows more than 10 % after the first minute, peak against peak', () => {
    // A sample below the first minute's peak does not lower the baseline; a later peak of 111 MB over 100 fails.
    assert.equal(passes([minute(100, [100, 80]), minute(100, [105]), minute(100, [109])], /RSS/), true);
    assert.equal(passes([minute(100, [100]), minute(100, [111, 104]), minute(100, [104])], /RSS/), false);
  });

  it('fails when the last minute\'s p99 exceeds 1.5× the second minute\'s', () => {
    // p99 of the second minute: 99 ms; of the last: 147 ms (1.48×), then 159 ms (1.61×).
    assert.equal(passes([minute(1000, [1]), minute(100, [1]), minute(148, [1])], /p99/), true);
    assert.equal(passes([minute(1000, [1]), minute(100, [1]), minute(160, [1])], /p99/), false);
  });

  it('needs three minutes to judge drift', () => {
    const checks = soakChecks([summarizeMinute(0, minute(10, [1])), summarizeMinute(1, minute(10, [1]))]);
    assert.equal(checks.at(-1)!.pass, false);
    assert.match(checks.at(-1)!.actual, /2 minutes/);
  });
});
