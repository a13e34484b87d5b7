/**
 * How long a property of a speed mechanism runs (test/fuzz/speed-*.test.ts): a few seconds'
 * worth of cases in `npm test`, many more with `npm run fuzz` (FUZZ_RUNS) or for a while
 * (FUZZ_SECONDS); FUZZ_SEED replays a failure fast-check printed.
 */
import type { Parameters } from 'fast-check';

function integerFromEnv(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got "${text}"`);
  return value;
}

export function propertyRuns<T>(defaultRuns: number): Parameters<T> {
  const seed = integerFromEnv('FUZZ_SEED');
  const seconds = integerFromEnv('FUZZ_SECONDS');
  return {
    numRuns: seconds !== undefined ? Number.MAX_SAFE_INTEGER : (integerFromEnv('FUZZ_RUNS') ?? defaultRuns),
    ...(seconds !== undefined && { interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false }),
    ...(seed !== undefined && { seed }),
  };
}
