/**
 * One file of a Takeout archive read into the steps of an import (docs/takeout.md): the file's
 * entries checked one by one with the API's rules for their kind, converted to Stride's units, and
 * grouped by local date — one step per date, written in one transaction. An entry that breaks a
 * rule is skipped and named (its file, its index in the file's list, why); a file that is not a
 * JSON list is skipped whole. Reading is deterministic, so a resumed import finds the same steps.
 */
import { LocalClockReader, localDayNumber, type LocalSeconds } from '../../calendar/local-clock.js';
import type { SleepSessionInput, SleepStage, SleepStageName } from '../../store/sleep.js';
import type { SkippedEntry, TakeoutKind } from '../../store/takeout-imports.js';
import type { WeightInput } from '../../store/body-weight.js';
import { MAX_FAT_PERCENT, MAX_KG, MIN_FAT_PERCENT, MIN_KG, weightInput, weightProblem } from '../body-weight.js';
import { minutesOfReadings, type HeartRateReading } from '../heart-rate-readings.js';
import { tooFarAhead } from '../future-times.js';
import { MAX_STAGES, sessionProblem } from '../sleep-sessions.js';
import { MAX_STEPS_PER_MINUTE } from '../step-samples.js';
import { SUM_METRICS } from '../sum-metrics.js';
import { MAX_BPM, MIN_BPM, type HeartRateMinute, type MinuteSample } from '../../store/series-writer.js';
import { parseDateAndTime, parseIsoLocalTime, parseListDate, parseListTime } from './fitbit-times.js';
import type { WeightUnit } from './profile.js';

/** What a file is read with. */
export interface ReadContext {
  /** The file's name in the archive, as reports name it. */
  file: string;
  /** The zone of the archive's local times. */
  zone: string;
  /** The clock the import checks "not in the future" against (when it was previewed). */
  now: number;
  weightUnit: WeightUnit;
}

interface StepBase {
  /** The local date (days since 1970-01-01); null for a file skipped whole. */
  day: number | null;
  /** Entries of the file that fall on this date (readings, for heart rate). */
  entries: number;
  skipped: SkippedEntry[];
}

export type ReadStep =
  | (StepBase & { kind: 'steps' | 'distance' | 'calories'; samples: MinuteSample[] })
  | (StepBase & { kind: 'heartrate'; minutes: HeartRateMinute[] })
  | (StepBase & { kind: 'sleep'; sessions: SleepSessionInput[]; names: Array<{ file: string; entry: number }> })
  | (StepBase & { kind: 'weight'; weights: WeightInput[]; names: Array<{ file: string; entry: number }> })
  | (StepBase & { kind: 'resting_heart_rate' })
  | (StepBase & { kind: 'unread'; of: TakeoutKind });

/** Per local date, what a reader collects. */
interface DayGroup<T> {
  entries: number;
  skipped: SkippedEntry[];
  records: T[];
}

/** Collects a file's records and skips by local date, and its skips that have none. */
class Days<T> {
  readonly groups = new Map<number, DayGroup<T>>();
  readonly undated: SkippedEntry[] = [];

  constructor(private readonly context: ReadContext) {}

  group(day: number): DayGroup<T> {
    let group = this.groups.get(day);
    if (!group) this.groups.set(day, (group = { entries: 0, skipped: [], records: [] }));
    return group;
  }

  add(day: number, record: T): void {
    const group = this.group(day);
    group.entries++;
    group.records.push(record);
  }

  skip(day: number | null, entry: number, code: string, reason: string): void {
    const skipped = { file: this.context.file, entry, code, reason };
    if (day === null) this.undated.push(skipped);
    else {
      const group = this.group(day);
      group.entries++;
      group.skipped.push(skipped);
    }
  }

  /** The groups in date order, the undated skips with the first (or alone, for a file with no dates). */
  steps<S>(make: (day: number | null, group: DayGroup<T>) => S): S[] {
    const days = [...this.groups.keys()].sort((a, b) => a - b);
    if (this.undated.length > 0) {
      if (days.length === 0) return [make(null, { entries: this.undated.length, skipped: this.undated, records: [] })];
      const first = this.groups.get(days[0]!)!;
      first.skipped.unshift(...this.undated);
      first.entries += this.undated.length;
    }
    return days.map((day) => make(day, this.groups.get(day)!));
  }
}

/** The file's list of entries, or the step that skips the file whole. */
function listOf(text: string, kind: TakeoutKind, context: ReadContext): unknown[] | ReadStep {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (error) {
    const reason = `is not valid JSON (${error instanceof Error ? error.message : String(error)}); the file was not imported`;
    return { kind: 'unread', of: kind, day: null, entries: 0, skipped: [{ file: context.file, entry: null, code: 'malformed_file', reason }] };
  }
  if (!Array.isArray(list)) {
    return { kind: 'unread', of: kind, day: null, entries: 0, skipped: [{ file: context.file, entry: null, code: 'malformed_file', reason: 'is not a JSON list of entries; the file was not imported' }] };
  }
  return list;
}

/** The file's steps; `bytes` its inflated content. */
export function readFile(kind: TakeoutKind, bytes: Buffer, context: ReadContext): ReadStep[] {
  const list = listOf(bytes.toString('utf8'), kind, context);
  if (!Array.isArray(list)) return [list];
  switch (kind) {
    case 'steps':
    case 'distance':
    case 'calories':
      return readMinutes(kind, list, context);
    case 'heartrate':
      return readHeartRate(list, context);
    case 'resting_heart_rate':
      return readRestingRates(list, context);
    case 'sleep':
      return readSleep(list, context);
    case 'weight':
      return readWeights(list, context);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A number as Fitbit writes one: a JSON number, or a string of one. */
function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

/** The instant of a local time, or why there is none to import. */
type Instant = { utc: number } | { code: string; reason: string };

function instantOf(clock: LocalClockReader, local: LocalSeconds | null, written: unknown, format: string, now: number): Instant {
  if (local === null) return { code: 'bad_time', reason: `the time ${JSON.stringify(written)} is not ${format}` };
  const instant = clock.at(local);
  if ('skipped' in instant) return { code: 'clock_gap', reason: `the time ${JSON.stringify(written)} does not exist in ${clock.zone} (the clocks went forward over it)` };
  const ahead = tooFarAhead(`the time ${JSON.stringify(written)}`, instant.utc, now);
  if (ahead !== null) return { code: 'future', reason: ahead };
  return instant;
}

/** The local day and instant of a `"MM/DD/YY HH:MM:SS"` entry of a minute or heart-rate file. */
function listEntryTime(clock: LocalClockReader, written: unknown, now: number): { day: number | null; instant: Instant } {
  const local = parseListTime(written);
  return { day: local === null ? null : localDayNumber(local), instant: instantOf(clock, local, written, 'MM/DD/YY HH:MM:SS', now) };
}

/** A minute's value of a sum metric in Stride's units, or why it cannot be stored. */
function minuteValue(kind: 'steps' | 'distance' | 'calories', raw: number): number | string {
  if (kind === 'steps') {
    if (!Number.isInteger(raw) || raw < 0 || raw > MAX_STEPS_PER_MINUTE) return `${raw} steps in a minute: steps are whole numbers from 0 to ${MAX_STEPS_PER_MINUTE}`;
    return raw;
  }
  if (kind === 'distance') {
    // Fitbit's archive writes distance in centimetres; Stride stores whole metres.
    const metres = Math.round(raw / 100);
    if (raw < 0 || metres > SUM_METRICS.distance.maxPerMinute) return `${raw} cm in a minute: distance is from 0 to ${SUM_METRICS.distance.maxPerMinute} metres a minute`;
    return metres;
  }
  const kcal = Math.round(raw * 10) / 10;
  if (raw < 0 || kcal > SUM_METRICS.calories.maxPerMinute) return `${raw} kcal in a minute: calories are from 0 to ${SUM_METRICS.calories.maxPerMinute} a minute`;
  return kcal;
}

function readMinutes(kind: 'steps' | 'distance' | 'calories', list: unknown[], context: ReadContext): ReadStep[] {
  const clock = new LocalClockReader(context.zone);
  const days = new Days<MinuteSample>(context);
  const seen = new Set<number>();
  for (let index = 0; index < list.length; index++) {
    const row = list[index];
    if (!isObject(row)) {
      days.skip(null, index, 'malformed', 'the entry is not an object {"dateTime", "value"}');
      continue;
    }
    const { day, instant } = listEntryTime(clock, row.dateTime, context.now);
    if ('code' in instant) {
      days.skip(day, index, instant.code, instant.reason);
      continue;
    }
    const raw = numberOf(row.value);
    if (raw === null) {
      days.skip(day, index, 'bad_value', `the value ${JSON.stringify(row.value)} is not a number`);
      continue;
    }
    const value = minuteValue(kind, raw);
    if (typeof value === 'string') {
      days.skip(day, index, 'out_of_range', value);
      continue;
    }
    const start = instant.utc - (((instant.utc % 60) + 60) % 60);
    if (seen.has(start)) {
      days.skip(day, index, 'repeated', `the minute ${JSON.stringify(row.dateTime)} came earlier in the file; the first is imported`);
      continue;
    }
    seen.add(start);
    days.add(day!, { start_time: start, value });
  }
  return days.steps((day, group) => ({ kind, day, entries: group.entries, skipped: group.skipped, samples: group.records }));
}

function readHeartRate(list: unknown[], context: ReadContext): ReadStep[] {
  const clock = new LocalClockReader(context.zone);
  const days = new Days<HeartRateReading>(context);
  for (let index = 0; index < list.length; index++) {
    const row = list[index];
    const value = isObject(row) ? row.value : undefined;
    if (!isObject(row) || !isObject(value)) {
      days.skip(null, index, 'malformed', 'the entry is not an object {"dateTime", "value": {"bpm", "confidence"}}');
      continue;
    }
    const { day, instant } = listEntryTime(clock, row.dateTime, context.now);
    if ('code' in instant) {
      days.skip(day, index, instant.code, instant.reason);
      continue;
    }
    const bpm = numberOf(value.bpm);
    if (bpm === null || !Number.isInteger(bpm) || bpm < MIN_BPM || bpm > MAX_BPM) {
      days.skip(day, index, 'out_of_range', `the reading ${JSON.stringify(value.bpm)} bpm is not a whole number from ${MIN_BPM} to ${MAX_BPM}`);
      continue;
    }
    days.add(day!, { time: instant.utc, bpm });
  }
  return days.steps((day, group) => ({ kind: 'heartrate', day, entries: group.entries, skipped: group.skipped, minutes: minutesOfReadings(group.records) }));
}

/** Resting heart rates are counted, not stored: Stride finds each day's from the minutes (docs/api.md). */
function readRestingRates(list: unknown[], context: ReadContext): ReadStep[] {
  const days = new Days<null>(context);
  for (let index = 0; index < list.length; index++) {
    const row = list[index];
    const value = isObject(row) ? row.value : undefined;
    const day = parseListDate(isObject(value) ? value.date : undefined) ?? parseListDate(isObject(row) ? row.dateTime : undefined);
    if (day === null) days.skip(null, index, 'malformed', 'the entry is not an object {"dateTime", "value": {"date", "value", "error"}}');
    else days.add(day, null);
  }
  return days.steps((day, group) => ({ kind: 'resting_heart_rate', day, entries: group.entries, skipped: group.skipped }));
}

/** Fitbit's sleep levels as Stride's stages: classic logs' restless counts as awake (docs/takeout.md). */
const STAGE_OF_LEVEL: Readonly<Record<string, SleepStageName>> = {
  wake: 'awake',
  light: 'light',
  deep: 'deep',
  rem: 'rem',
  asleep: 'light',
  restless: 'awake',
  awake: 'awake',
};

type Session = { session: SleepSessionInput; endLocal: LocalSeconds } | { code: string; reason: string };

function sessionOf(row: Record<string, unknown>, clock: LocalClockReader, context: ReadContext): Session {
  const levels = row.levels;
  const data = isObject(levels) ? levels.data : undefined;
  if (!Array.isArray(data) || data.length === 0) return { code: 'malformed', reason: 'the sleep log has no levels.data' };
  clock.restart();
  const stages: SleepStage[] = [];
  let endLocal = 0;
  for (let i = 0; i < data.length; i++) {
    const item = data[i];
    if (!isObject(item)) return { code: 'malformed', reason: `levels.data/${i} is not an object {"dateTime", "level", "seconds"}` };
    const stage = typeof item.level === 'string' ? STAGE_OF_LEVEL[item.level] : undefined;
    if (stage === undefined) return { code: 'bad_stages', reason: `levels.data/${i}/level ${JSON.stringify(item.level)} is none of ${Object.keys(STAGE_OF_LEVEL).join(', ')}` };
    const seconds = numberOf(item.seconds);
    if (seconds === null || !Number.isInteger(seconds) || seconds <= 0) return { code: 'bad_stages', reason: `levels.data/${i}/seconds ${JSON.stringify(item.seconds)} is not a whole number of seconds` };
    const local = parseIsoLocalTime(item.dateTime);
    const instant = instantOf(clock, local, item.dateTime, 'YYYY-MM-DDTHH:MM:SS.sss', context.now);
    if ('code' in instant) return { code: instant.code, reason: `levels.data/${i}: ${instant.reason}` };
    const previous = stages[stages.length - 1];
    if (previous && instant.utc !== previous.end_time) {
      return { code: 'bad_stages', reason: `levels.data/${i} starts ${instant.utc - previous.end_time} seconds after the level before it ends; levels follow one another` };
    }
    if (previous && previous.stage === stage) previous.end_time += seconds;
    else stages.push({ stage, start_time: instant.utc, end_time: instant.utc + seconds });
    endLocal = local! + seconds;
  }
  const short = isObject(levels) && Array.isArray(levels.shortData) ? levels.shortData : [];
  const withWakes = overlayShortWakes(stages, short, clock);
  if (withWakes.length > MAX_STAGES) return { code: 'bad_stages', reason: `the sleep log has ${withWakes.length} stages, more than ${MAX_STAGES}` };
  const session = { start_time: withWakes[0]!.start_time, end_time: withWakes[withWakes.length - 1]!.end_time, stages: withWakes };
  const problem = sessionProblem(session, context.now, '');
  if (problem !== null) return { code: 'bad_session', reason: problem };
  return { session, endLocal };
}

/**
 * Fitbit's stage logs list short wakes (three minutes or less) apart, in levels.shortData, over the
 * stages of levels.data; its own minutes awake count them, so they are laid over the stages here.
 */
function overlayShortWakes(stages: SleepStage[], shortData: unknown[], clock: LocalClockReader): SleepStage[] {
  const wakes: Array<[number, number]> = [];
  clock.restart();
  for (const item of shortData) {
    if (!isObject(item) || (item.level !== 'wake' && item.level !== 'awake')) continue;
    const seconds = numberOf(item.seconds);
    const local = parseIsoLocalTime(item.dateTime);
    const instant = local === null ? null : clock.at(local);
    if (seconds === null || seconds <= 0 || instant === null || 'skipped' in instant) continue;
    wakes.push([instant.utc, instant.utc + Math.round(seconds)]);
  }
  if (wakes.length === 0) return stages;
  const start = stages[0]!.start_time;
  const end = stages[stages.length - 1]!.end_time;
  const result: SleepStage[] = [];
  const push = (stage: SleepStageName, from: number, to: number) => {
    if (to <= from) return;
    const last = result[result.length - 1];
    if (last && last.stage === stage && last.end_time === from) last.end_time = to;
    else result.push({ stage, start_time: from, end_time: to });
  };
  wakes.sort((a, b) => a[0] - b[0]);
  for (const stage of stages) {
    let cursor = stage.start_time;
    for (const [from, to] of wakes) {
      const a = Math.max(from, stage.start_time, start);
      const b = Math.min(to, stage.end_time, end);
      if (b <= a || a < cursor) continue;
      push(stage.stage, cursor, a);
      push('awake', a, b);
      cursor = b;
    }
    push(stage.stage, cursor, stage.end_time);
  }
  return result;
}

function readSleep(list: unknown[], context: ReadContext): ReadStep[] {
  const clock = new LocalClockReader(context.zone);
  const days = new Days<{ session: SleepSessionInput; entry: number }>(context);
  for (let index = 0; index < list.length; index++) {
    const row = list[index];
    if (!isObject(row)) {
      days.skip(null, index, 'malformed', 'the entry is not a sleep log object');
      continue;
    }
    const read = sessionOf(row, clock, context);
    const dateOfSleep = typeof row.dateOfSleep === 'string' ? Date.parse(`${row.dateOfSleep}T00:00:00Z`) / 86_400_000 : NaN;
    if ('code' in read) {
      days.skip(Number.isInteger(dateOfSleep) ? dateOfSleep : null, index, read.code, read.reason);
      continue;
    }
    // A session belongs to the local date it ends on, as the API dates it.
    days.add(localDayNumber(read.endLocal), { session: read.session, entry: index });
  }
  return days.steps((day, group) => ({
    kind: 'sleep',
    day,
    entries: group.entries,
    skipped: group.skipped,
    sessions: group.records.map((record) => record.session),
    names: group.records.map((record) => ({ file: context.file, entry: record.entry })),
  }));
}

/** Kilograms per unit of the archive's weights. */
const KG_PER_UNIT: Readonly<Record<WeightUnit, number>> = { kg: 1, lb: 0.45359237, stone: 6.35029318 };

function readWeights(list: unknown[], context: ReadContext): ReadStep[] {
  const clock = new LocalClockReader(context.zone);
  const days = new Days<{ weight: WeightInput; entry: number }>(context);
  const seen = new Set<number>();
  for (let index = 0; index < list.length; index++) {
    const row = list[index];
    if (!isObject(row)) {
      days.skip(null, index, 'malformed', 'the entry is not a weight log object');
      continue;
    }
    const local = parseDateAndTime(row.date, row.time);
    const day = parseListDate(row.date);
    clock.restart();
    const instant = instantOf(clock, local, `${String(row.date)} ${String(row.time)}`, 'a date MM/DD/YY and a time HH:MM:SS', context.now);
    if ('code' in instant) {
      days.skip(day, index, instant.code, instant.reason);
      continue;
    }
    const weight = numberOf(row.weight);
    const kg = weight === null ? NaN : Math.round(weight * KG_PER_UNIT[context.weightUnit] * 100) / 100;
    if (!(kg >= MIN_KG && kg <= MAX_KG)) {
      days.skip(day, index, 'out_of_range', `the weight ${JSON.stringify(row.weight)} ${context.weightUnit} is not from ${MIN_KG} to ${MAX_KG} kg`);
      continue;
    }
    const fatRaw = row.fat === undefined || row.fat === null ? null : numberOf(row.fat);
    const fat = fatRaw === null || fatRaw === 0 ? null : Math.round(fatRaw * 100) / 100;
    if (fat !== null && !(fat >= MIN_FAT_PERCENT && fat <= MAX_FAT_PERCENT)) {
      days.skip(day, index, 'out_of_range', `the body fat ${JSON.stringify(row.fat)} % is not from ${MIN_FAT_PERCENT} to ${MAX_FAT_PERCENT}`);
      continue;
    }
    const body = { time: instant.utc, kg, fat_percent: fat };
    const problem = weightProblem(body, context.now, '');
    if (problem !== null) {
      days.skip(day, index, 'bad_value', problem);
      continue;
    }
    if (seen.has(body.time)) {
      days.skip(day, index, 'repeated', `a weighing at ${String(row.date)} ${String(row.time)} came earlier in the file; the first is imported`);
      continue;
    }
    seen.add(body.time);
    days.add(day!, { weight: weightInput(body), entry: index });
  }
  return days.steps((day, group) => ({
    kind: 'weight',
    day,
    entries: group.entries,
    skipped: group.skipped,
    weights: group.records.map((record) => record.weight),
    names: group.records.map((record) => ({ file: context.file, entry: record.entry })),
  }));
}
