/**
 * A Prometheus histogram of fixed buckets for the timings of every request and store call
 * (./metrics.ts), observed through a series looked up once: a bucket search and three additions.
 * prom-client's Histogram checks the labels, builds a text key, looks it up in a dictionary and
 * keys its buckets by their bound as text at every observation — about half a microsecond, twice or
 * more in every request when the figures can be read. Registered in prom-client's registry, which
 * writes it as it writes its own Histogram: the same lines for the same observations
 * (test/metric-series.test.ts holds the two equal).
 */
import type { Metric, Registry } from 'prom-client';

type Labels<T extends string> = Readonly<Record<T, string | number>>;

/** One series of a SeriesHistogram: observes a value (in seconds). */
export type Observe = (value: number) => void;

interface Series {
  labels: Labels<string>;
  /** Observations per bucket (not cumulative); the last one beyond every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** The values of prom-client's metric interface (`getForPromString`): its Histogram's, in its order. */
interface Value {
  labels: Record<string, string | number>;
  sharedLabels: Labels<string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

export class SeriesHistogram<T extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** Series in the order of their first observation (as prom-client lists them). */
  private series = new Map<string, Series>();
  /** Counts resets: an observer finds its series again after one. */
  private generation = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly T[],
    private readonly buckets: readonly number[],
    registers: readonly Registry[],
  ) {
    // The registry takes any metric with prom-client's interface; its type lists only its own classes.
    for (const registry of registers) registry.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of `labels`, to be kept by the caller; it appears in the metrics at its first
   * observation, as a prom-client series does.
   */
  observer(labels: Labels<T>): Observe {
    const key = this.labelNames.map((name) => String(labels[name])).join('\u0000');
    const buckets = this.buckets;
    let found: Series | undefined;
    let generation = -1;
    return (value) => {
      let series = found;
      if (series === undefined || generation !== this.generation) {
        generation = this.generation;
        series = this.series.get(key);
        if (series === undefined) {
          series = { labels: { ...labels }, counts: new Float64Array(buckets.length + 1), sum: 0, count: 0 };
          this.series.set(key, series);
        }
        found = series;
      }
      let bucket = 0;
      while (bucket < buckets.length && value > buckets[bucket]!) bucket++;
      series.counts[bucket]! += 1;
      series.sum += value;
      series.count += 1;
    };
  }

  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Value[] }> {
    const values: Value[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le: bound }, sharedLabels: labels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucketName, exemplar: null });
      values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** As prom-client's `get()`: each value's labels with its series' labels. */
  async get() {
    const metric = await this.getForPromString();
    return { ...metric, values: metric.values.map(({ labels, sharedLabels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } })) };
  }

  reset(): void {
    this.series = new Map();
    this.generation += 1;
  }
}
