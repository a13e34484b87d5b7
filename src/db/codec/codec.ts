/**
 * One kind of packed data, in the manner of Prometheus's tsdb/chunkenc `Chunk`: what is kept is
 * bytes, and each encoding says how a value becomes bytes, how the bytes become the value again,
 * and how to walk its items in order without building the whole value. One file per encoding:
 *
 * - minute-values.ts: a day of minutes each absent or a non-negative integer (steps, calories, …)
 * - heart-rate-minutes.ts: a day of heart-rate minutes (avg, min, max)
 * - sleep-stages.ts: the stages of one sleep session
 *
 * What they share is written once: the format byte and the deflate rule (frame.ts), the runs of
 * present minutes (runs.ts), unsigned LEB128 and zigzag numbers (varint.ts). Every format byte
 * written once stays readable: stored rows are never rewritten when an encoder changes.
 */
export interface Codec<Value, Item> {
  /** The encoding's name, for errors and tests. */
  readonly name: string;
  encode(value: Value): Buffer;
  decode(bytes: Uint8Array): Value;
  /** The items of the packed value in order, decoded one at a time. */
  iterate(bytes: Uint8Array): IterableIterator<Item>;
}
