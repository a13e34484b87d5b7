/**
 * The histogram of request and store-call timings (src/metric-series.ts) reads in /metrics as
 * prom-client's own Histogram would, observation for observation.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { SeriesHistogram } from '../src/metric-series.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.5];
const NAME = 'test_duration_seconds';
const HELP = 'Durations, "quoted" and \\\\ escaped.';

function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route', 'status'], buckets: BUCKETS, registers: [theirs] });
  const histogram = new SeriesHistogram(NAME, HELP, ['method', 'route', 'status'], BUCKETS, [ours]);
  return { theirs, ours, reference, histogram };
}

it('writes the lines prom-client writes for the same observations', async () => {
  const { theirs, ours, reference, histogram } = pair();
  const labelSets = [
    { method: 'GET', route: '/v1/users/me', status: 200 },
    { method: 'POST', route: '/oauth2/token', status: 400 },
    { method: 'GET', route: 'a "route" \\ with\nodd text', status: 404 },
  ];
  const observers = labelSets.map((labels) => histogram.observer(labels));
  // On every bound, between bounds, beyond the last one, and zero.
  const values = [0, 0.0005, 0.001, 0.0015, 0.0025, 0.004, 0.005, 0.01, 0.2, 0.5, 0.75, 3, 1e-7];
  let n = 0;
  for (const value of values) {
    for (const [i, labels] of labelSets.entries()) {
      if ((n++ + i) % 4 === 0) continue; // series observed different numbers of times
      reference.observe(labels, value);
      observers[i]!(value);
    }
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
  // Through a merged registry too, as the application's metrics are.
  assert.equal(await Registry.merge([ours]).metrics(), await Registry.merge([theirs]).metrics());
});

it('shows a series from its first observation on, and none after a reset until it is observed again', async () => {
  const { theirs, ours, reference, histogram } = pair();
  const labels = { method: 'GET', route: '/x', status: 200 };
  const observe = histogram.observer(labels);
  histogram.observer({ method: 'PUT', route: '/never', status: 500 });
  assert.equal(await ours.metrics(), await theirs.metrics(), 'no series yet');
  observe(0.003);
  reference.observe(labels, 0.003);
  assert.match(await ours.metrics(), /test_duration_seconds_count\{method="GET",route="\/x",status="200"\} 1/);
  assert.equal(await ours.metrics(), await theirs.metrics());
  ours.resetMetrics();
  theirs.resetMetrics();
  assert.equal(await ours.metrics(), await theirs.metrics(), 'reset');
  observe(0.02);
  reference.observe(labels, 0.02);
  assert.equal(await ours.metrics(), await theirs.metrics(), 'observed again after the reset');
});
