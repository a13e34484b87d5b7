/**
 * A person's data of every kind written at once — `stride import`, `stride demo` — through the
 * stores, each write with the event the API's upload of it records (docs/webhooks.md). Records
 * arrive checked (cli/import.ts checks a file with the routes' schemas and checks); this module
 * only writes them as the API would take them: the minutes a week per write (what one request
 * holds), time-ordered, so that each event names a week's ranges; a sleep session or a weighing
 * per write.
 */
import { SUM_METRIC_NAMES, type HeartRateMinute, type MinuteSample, type SumMetric } from '../store/series-writer.js';
import type { SleepSessionInput, StoredSleepSession } from '../store/sleep.js';
import { overlapsStored } from './sleep-overlap.js';
import type { Stores } from '../store/stores.js';
import { weightInput, type WeightBody } from './body-weight.js';
import { dataChange, profileZone } from './local-dates.js';
import { MAX_SAMPLES_PER_REQUEST, seriesChange } from './minute-samples.js';

/** The kinds of a person's data: every sum metric (db/series-metrics.ts), then the others. */
export type DataKind = SumMetric | 'heartrate' | 'sleep' | 'weight';

export const SUM_KINDS: readonly SumMetric[] = SUM_METRIC_NAMES;

/** One value per sum metric, made by `of`: what each kind of a file or a report holds for them. */
export function perSumKind<T>(of: (metric: SumMetric) => T): Record<SumMetric, T> {
  return Object.fromEntries(SUM_KINDS.map((metric) => [metric, of(metric)])) as Record<SumMetric, T>;
}

/** The kinds in the order an export holds them (docs/web.md, "Your data"). */
export const DATA_KINDS: readonly DataKind[] = [...SUM_KINDS, 'heartrate', 'sleep', 'weight'];

/** Records of each kind, in the shapes of an export (the sum metrics' minutes; heart rate as stored minutes). */
export interface PersonRecords extends Partial<Record<SumMetric, MinuteSample[]>> {
  heartrate?: HeartRateMinute[];
  sleep?: SleepSessionInput[];
  weight?: WeightBody[];
}

/** How many records of each kind were written. */
export type WrittenCounts = Partial<Record<DataKind, number>>;

/** The person the data is written for: their id, and the zone their events' dates are counted in. */
export interface DataOwner {
  id: string;
  timezone: string;
}

/** A sleep session that overlaps one the person has stored (with another start_time): the API's 409. */
export class SleepOverlapError extends Error {
  constructor(
    readonly session: SleepSessionInput,
    readonly stored: StoredSleepSession,
  ) {
    super(`the session from ${session.start_time} to ${session.end_time} overlaps the stored session ${stored.id} (start_time ${stored.start_time}, end_time ${stored.end_time})`);
  }
}

/** Minutes per write: the most one upload request holds. */
const MINUTES_PER_WRITE = MAX_SAMPLES_PER_REQUEST;

/** The records in time order (as they mostly come already: then as they are). */
function byStart<T extends { start_time: number }>(records: readonly T[]): readonly T[] {
  for (let i = 1; i < records.length; i++) if (records[i]!.start_time < records[i - 1]!.start_time) return [...records].sort((a, b) => a.start_time - b.start_time);
  return records;
}

/** Writes `records` of every kind for `owner`; `now` the server's clock. Returns the counts written. */
export async function writePersonData(stores: Stores, owner: DataOwner, records: PersonRecords, now: number, coalesceSeconds: number): Promise<WrittenCounts> {
  const written: WrittenCounts = {};
  const zone = profileZone(owner.timezone);
  for (const metric of SUM_KINDS) {
    const samples = records[metric];
    if (!samples) continue;
    const ordered = byStart(samples);
    for (let i = 0; i < ordered.length; i += MINUTES_PER_WRITE) {
      const batch = ordered.slice(i, i + MINUTES_PER_WRITE);
      await stores[metric].upsertSamples(owner.id, batch, seriesChange(batch.map((sample) => sample.start_time), owner.timezone, now, coalesceSeconds));
    }
    written[metric] = samples.length;
  }
  if (records.heartrate) {
    const ordered = byStart(records.heartrate);
    for (let i = 0; i < ordered.length; i += MINUTES_PER_WRITE) {
      const batch = ordered.slice(i, i + MINUTES_PER_WRITE);
      await stores.heartRate.upsertSamples(owner.id, batch, seriesChange(batch.map((minute) => minute.start_time), owner.timezone, now, coalesceSeconds));
    }
    written.heartrate = ordered.length;
  }
  const change = dataChange(zone, now, coalesceSeconds);
  if (records.sleep) {
    for (const session of byStart(records.sleep)) {
      const outcome = await stores.sleep.save(owner.id, session, change);
      if ('overlaps' in outcome) throw new SleepOverlapError(session, outcome.overlaps);
    }
    written.sleep = records.sleep.length;
  }
  if (records.weight) {
    for (const weight of records.weight) await stores.bodyWeight.save(owner.id, weightInput(weight), change);
    written.weight = records.weight.length;
  }
  return written;
}

/**
 * The first of `sessions` (by start) that overlaps a session the person has stored with another
 * start_time — which the API refuses with 409 — and that stored session; null when none does. One
 * read for them all: a stored session that overlaps one of them ends within a day of its end.
 */
export async function firstStoredOverlap(stores: Stores, userId: string, sessions: readonly SleepSessionInput[]): Promise<{ index: number; stored: StoredSleepSession } | null> {
  if (sessions.length === 0) return null;
  const from = Math.min(...sessions.map((session) => session.start_time));
  const to = Math.max(...sessions.map((session) => session.end_time)) + 86_400 + 1;
  const stored = await stores.sleep.endingWithin(userId, from, to);
  const order = sessions.map((_, index) => index).sort((a, b) => sessions[a]!.start_time - sessions[b]!.start_time);
  for (const index of order) {
    const session = sessions[index]!;
    const other = stored.find((s) => overlapsStored(session, s));
    if (other) return { index, stored: other };
  }
  return null;
}

