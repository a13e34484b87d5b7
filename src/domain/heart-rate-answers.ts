/**
 * The last heart-rate answers written, kept per user and query with the stored days they were
 * written from. An answer is a pure function of the query, its kept plan and those days
 * (store/heart-rate-series.ts, ./heart-rate-series-json.ts): a request still reads the days, and
 * when they are the same as the kept answer's — every row's day, total and packed columns, byte
 * for byte — the kept bytes are the answer. Nothing is invalidated, so no write can leave a stale
 * answer behind: an upload, a deletion or another zone reads other days or another plan.
 *
 * What it saves: a day by minute is 1,440 buckets and about 126 KB of JSON, and writing it cost
 * several times what sending it does (docs/performance.md; decision 0028). Needed by rows 9 and 17
 * of `npm run bench` (a day of minute heart rate, native and Fitbit-compatible). Bounded by the
 * bytes kept, least recently used first out. Switch `heart-rate-answers` (src/speed-switches.ts):
 * the plain path (NO_KEPT_ANSWERS) writes every answer; test/fuzz/speed-heart-rate-answers shows
 * random uploads and reads answer the same bytes both ways.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import type { HeartRateDayRow } from '../store/heart-rate-series.js';
import { isOn } from '../speed-switches.js';
import type { SeriesRequest } from './step-series.js';

/** About 64 answers of a day by minute, per process. */
export const MAX_KEPT_ANSWER_BYTES = 8 * 1024 * 1024;

export interface KeptHeartRateAnswers {
  /** The answer kept under `key` (answerKey), when it was written from `plan` and the same `rows`. */
  find(key: string, plan: BucketPlan, rows: readonly HeartRateDayRow[]): Buffer | undefined;
  /** Keeps `body` as the answer under `key` from `plan` and `rows` (replacing any). */
  keep(key: string, plan: BucketPlan, rows: readonly HeartRateDayRow[], body: Buffer): void;
  /** Bytes kept (answers and the packed columns beside them). */
  readonly bytes: number;
}

interface Kept {
  plan: BucketPlan;
  rows: readonly HeartRateDayRow[];
  body: Buffer;
  size: number;
}

/** The key of a user's answer to a query; `variant` names what else the answer depends on (its shape). */
export const answerKey = (userId: string, request: SeriesRequest, variant = '') => `${userId} ${request.timezone} ${request.granularity} ${request.start} ${request.end} ${variant}`;

/** Rows from the same reader have the same types: day_start and total compare as values. */
function sameDays(kept: readonly HeartRateDayRow[], read: readonly HeartRateDayRow[]): boolean {
  if (kept.length !== read.length) return false;
  for (let i = 0; i < kept.length; i++) {
    const a = kept[i]!;
    const b = read[i]!;
    if (a.day_start !== b.day_start || a.total !== b.total) return false;
    if (Buffer.compare(a.minutes, b.minutes) !== 0 || Buffer.compare(a.hours, b.hours) !== 0) return false;
  }
  return true;
}

function sizeOf(rows: readonly HeartRateDayRow[], body: Buffer): number {
  let size = body.length;
  for (const row of rows) size += row.hours.length + row.minutes.length + 64;
  return size;
}

export function keptHeartRateAnswers(maxBytes = MAX_KEPT_ANSWER_BYTES): KeptHeartRateAnswers {
  // A Map iterates in insertion order: a found answer is moved to the end, the first is the oldest.
  const answers = new Map<string, Kept>();
  let bytes = 0;
  const drop = (key: string, kept: Kept) => {
    answers.delete(key);
    bytes -= kept.size;
  };
  return {
    find(key, plan, rows) {
      const kept = answers.get(key);
      // Another object for the same query: its kept plan was dropped and made again.
      if (kept === undefined || kept.plan !== plan || !sameDays(kept.rows, rows)) return undefined;
      answers.delete(key);
      answers.set(key, kept);
      return kept.body;
    },
    keep(key, plan, rows, body) {
      const previous = answers.get(key);
      if (previous !== undefined) drop(key, previous);
      const size = sizeOf(rows, body);
      if (size > maxBytes) return;
      answers.set(key, { plan, rows, body, size });
      bytes += size;
      for (const [oldest, kept] of answers) {
        if (bytes <= maxBytes) break;
        drop(oldest, kept);
      }
    },
    get bytes() {
      return bytes;
    },
  };
}

/** The plain path: nothing kept, every answer written. */
export const NO_KEPT_ANSWERS: KeptHeartRateAnswers = { find: () => undefined, keep() {}, bytes: 0 };

/** Answers kept for a reader, or none when STRIDE_PLAIN switches them off. */
export function heartRateAnswers(): KeptHeartRateAnswers {
  return isOn('heart-rate-answers') ? keptHeartRateAnswers() : NO_KEPT_ANSWERS;
}
