/**
 * The stores with every call timed into a histogram labelled `store.method` (bearer.find,
 * rotation.rotate, …): one database statement or transaction each, so this is the latency the
 * database gives each kind of work. A call that answers synchronously (SQLite) stays synchronous.
 */
import type { Observe, SeriesHistogram } from '../metric-series.js';
import { SUM_METRIC_NAMES } from '../db/series-metrics.js';
import type { Stores } from './stores.js';

const TIMED: ReadonlyArray<keyof Stores> = ['apps', 'users', 'sessions', 'grants', 'codes', 'tokens', 'rotation', 'bearer', ...SUM_METRIC_NAMES, 'heartRate', 'sleep', 'bodyWeight', 'summary', 'webhooks', 'usage'];

export function observeStoreCalls(stores: Stores, histogram: SeriesHistogram<'call'>): Stores {
  const observed: Record<string, unknown> = { ...stores };
  for (const name of TIMED) {
    const store = stores[name] as unknown as Record<string, unknown>;
    const timed: Record<string, unknown> = {};
    for (const [method, value] of Object.entries(store)) {
      timed[method] = typeof value === 'function' ? timedCall(store, value, histogram.observer({ call: `${name}.${method}` })) : value;
    }
    observed[name] = timed;
  }
  return observed as unknown as Stores;
}

function timedCall(store: object, call: Function, observe: Observe) {
  return (...args: unknown[]) => {
    const started = performance.now();
    const result = call.apply(store, args);
    if (!(result instanceof Promise)) {
      observe((performance.now() - started) / 1000);
      return result;
    }
    // then rather than finally: one promise a call instead of three.
    return result.then(
      (value: unknown) => {
        observe((performance.now() - started) / 1000);
        return value;
      },
      (error: unknown) => {
        observe((performance.now() - started) / 1000);
        throw error;
      },
    );
  };
}
