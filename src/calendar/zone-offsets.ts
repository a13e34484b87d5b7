/**
 * A zone's offset spans worked out once per chunk of about 400 days (switch `zone-offsets`,
 * src/speed-switches.ts), so that a 3-year series costs a handful of lookups once warm.
 *
 * What it saves: sampling the zone's offset once a day through Intl (luxon) and a binary search at
 * each change, for every bucket plan and local date worked out. Every series row of `npm run bench`
 * plans its buckets through it, on a plan's first request (2, 8, 9, 10, 16, 17). The plain path
 * works the spans out each time; test/fuzz/speed-caches shows both give the same spans.
 */

/** Chunks kept, at most; beyond, the kept ones are let go together. */
const MAX_KEPT_CHUNKS = 5000;

/** `spansOf(zone, chunk)` kept by zone and chunk; the spans are shared, never modified. */
export function keptChunks<Spans>(spansOf: (zone: string, chunk: number) => Spans, maxChunks = MAX_KEPT_CHUNKS): (zone: string, chunk: number) => Spans {
  const kept = new Map<string, Spans>();
  return (zone, chunk) => {
    const key = `${zone}\u0000${chunk}`;
    let spans = kept.get(key);
    if (spans === undefined) {
      spans = spansOf(zone, chunk);
      if (kept.size >= maxChunks) kept.clear();
      kept.set(key, spans);
    }
    return spans;
  };
}
