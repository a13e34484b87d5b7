/**
 * The switches of Stride's speed mechanisms, for measurement only (docs/performance.md, "Switching
 * a mechanism off"; decision 0045). Each mechanism answers exactly what its plain path answers, a
 * property test shows it on random inputs, and it stays only while an interleaved A/B of the bench
 * shows a target needs it. `STRIDE_PLAIN=dpop-keys,bucket-plans` (or `STRIDE_PLAIN=all`) runs the
 * plain path of those mechanisms, so that the A/B needs one build, not two. Read here and nowhere
 * else, once, when the process starts.
 */

/** Every mechanism with a switch: its module and the rows of `npm run bench` that need it. */
export const SPEED_MECHANISMS = {
  'dpop-keys': 'oauth/dpop-kept-keys.ts: a proof whose header was seen before has only its signature checked (rows 11, 12)',
  'heart-rate-answers': 'domain/heart-rate-answers.ts: a heart-rate answer written from the same days sent again (rows 8, 9, 17)',
  'bucket-plans': 'domain/kept-plans.ts: a series\' buckets planned once per zone, granularity and range (rows 2, 8, 9, 10, 16, 17)',
  'zone-offsets': 'calendar/zone-offsets.ts: a zone\'s UTC offsets worked out once per 400 days (every series row)',
  'minute-days': 'store/minute-days.ts: the daily summary\'s days unpacked once while their bytes are the same (row 10)',
  'fitbit-dates': 'api/fitbit/dates.ts keptDates: the dates of a Fitbit-compatible path worked out once (rows 16, 17)',
} as const;

export type SpeedMechanism = keyof typeof SPEED_MECHANISMS;

/** The mechanisms STRIDE_PLAIN switches off; a name that is not a mechanism is refused. */
export function plainMechanisms(text: string | undefined): ReadonlySet<SpeedMechanism> {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.includes('all')) return new Set(Object.keys(SPEED_MECHANISMS) as SpeedMechanism[]);
  for (const name of names) {
    if (!(name in SPEED_MECHANISMS)) throw new Error(`STRIDE_PLAIN names "${name}", which is not a speed mechanism: use all or some of ${Object.keys(SPEED_MECHANISMS).join(', ')}`);
  }
  return new Set(names as SpeedMechanism[]);
}

const plain = plainMechanisms(process.env.STRIDE_PLAIN);

/** False when STRIDE_PLAIN switched the mechanism off: its plain path runs instead. */
export function isOn(mechanism: SpeedMechanism): boolean {
  return !plain.has(mechanism);
}

/**
 * What `make` gives for an input, kept by `keyOf` of it, at most `max` values: beyond, the kept ones
 * are let go together, so a hot path pays one Map lookup and no bookkeeping per use. The kept values
 * are shared: callers never modify them.
 */
export function keptBy<In, Key, Value>(max: number, keyOf: (input: In) => Key, make: (input: In) => Value): (input: In) => Value {
  const kept = new Map<Key, Value>();
  return (input) => {
    const key = keyOf(input);
    let value = kept.get(key);
    if (value === undefined) {
      value = make(input);
      if (kept.size >= max) kept.clear();
      kept.set(key, value);
    }
    return value;
  };
}
