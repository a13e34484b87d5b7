/**
 * The files `stride import` reads (docs/operations.md, "Importing data"): a person's export
 * (`/account/export.json`, every kind in it), or one kind as CSV or JSON lines. Every record is
 * checked as the API checks an upload of it — the route's own JSON schema, then the checks a schema
 * cannot make (the same functions of domain/) — and the whole file is refused at its first bad
 * record, named by its line (CSV, JSON lines) or its place in the export (`sleep/3/end_time`).
 * Nothing is written until every record passed.
 */
import { sessionsOverlap } from '../domain/sleep-overlap.js';
import { SLEEP_SESSION_BODY_JSON_SCHEMA, sessionProblem } from '../domain/sleep-sessions.js';
import { WEIGHT_BODY_JSON_SCHEMA, weightProblem, type WeightBody } from '../domain/body-weight.js';
import {
  HEART_RATE_MINUTE_JSON_SCHEMA,
  HEART_RATE_UPLOAD_JSON_SCHEMA,
  heartRateMinuteProblem,
  minutesOfReadings,
  readingProblem,
  type HeartRateReading,
} from '../domain/heart-rate-readings.js';
import { minuteStartProblem, sampleBatchJsonSchema } from '../domain/minute-samples.js';
import { DATA_KINDS, perSumKind, type DataKind, type PersonRecords } from '../domain/person-data.js';
import { sampleProblem } from '../domain/step-samples.js';
import { SUM_METRICS } from '../domain/sum-metrics.js';
import { schemaCheck } from '../http/validation.js';
import type { HeartRateMinute, MinuteSample, SumMetric } from '../store/series-writer.js';
import type { SleepSessionInput } from '../store/sleep.js';

/** A file that cannot be imported; the message names the first bad record. */
export class ImportFileError extends Error {}

/** What a file holds, checked, and the names of its sleep sessions (for a conflict found later). */
export interface ImportedFile {
  records: PersonRecords;
  /** How many heart-rate readings made the minutes of `records.heartrate` (a file of readings). */
  readings?: number;
  sleepNames: string[];
}

/**
 * How a record is named in messages: `at` goes before a field of it in the words of the domain's
 * checks (`sleep/3/` in an export; nothing in a file of one kind, whose messages start with the line).
 */
interface RecordName {
  at: string;
  /** The record itself, in a message about another record (`line 5`, `steps/4`). */
  ref: string;
  /** A message of a domain check, whose fields were named with `at`. */
  told(problem: string): string;
  /** A schema check's words (http/validation.ts): a field's path and the rule. */
  schema(words: string): string;
}

const lineName = (line: number): RecordName => ({
  at: '',
  ref: `line ${line}`,
  told: (problem) => `line ${line}: ${problem}`,
  schema: (words) => `line ${line}: ${words.startsWith('/') ? words.slice(1) : `the record${words}`}`,
});

const placeName = (kind: DataKind, index: number): RecordName => ({
  at: `${kind}/${index}/`,
  ref: `${kind}/${index}`,
  told: (problem) => problem,
  schema: (words) => `${kind}/${index}${words}`,
});

/** One kind's check of a record: the problem (a whole message), or null. */
type RecordCheck = (record: unknown, name: RecordName) => string | null;

/** Makes a kind's check for one file, which keeps what it has seen (a minute twice is refused); `now` is the server's clock. */
type CheckOfFile = (now: number) => RecordCheck;

/**
 * Refuses a second record with the key (a minute, a time) of an earlier one, as an upload refuses
 * a minute sent twice; `seen` holds the first record of each key by its name.
 */
function repeatProblem(seen: Map<number, string>, key: number, name: RecordName, field: string, what: string): string | null {
  const first = seen.get(key);
  if (first !== undefined) return name.told(`${name.at}${field} repeats the ${what} of ${first}; one record per ${what}`);
  seen.set(key, name.ref);
  return null;
}

/** Steps: the hand checks of their route (domain/step-samples.ts), whose words docs/api.md quotes. */
const stepsCheck: CheckOfFile = (now) => {
  const seen = new Set<number>();
  return (record, name) => {
    const problem = sampleProblem(record, now, seen);
    return problem === null ? null : name.at === '' ? name.told(problem) : `${name.ref}: ${problem}`;
  };
};

/** Distance, calories, every sum metric but steps: the items of their route's body schema, then what the route checks by hand. */
function sumCheck(metric: Exclude<SumMetric, 'steps'>): CheckOfFile {
  const schema = schemaCheck(sampleBatchJsonSchema(SUM_METRICS[metric]).properties.samples.items);
  return (now) => {
    const seen = new Map<number, string>();
    return (record, name) => {
      const words = schema(record);
      if (words !== null) return name.schema(words);
      const { start_time: startTime } = record as MinuteSample;
      const problem = minuteStartProblem(startTime, now, name.at);
      if (problem !== null) return name.told(problem);
      return repeatProblem(seen, startTime, name, 'start_time', 'minute');
    };
  };
}

/** Heart-rate readings: the items of the route's body schema, then its check of the time. */
const readingSchema = schemaCheck(HEART_RATE_UPLOAD_JSON_SCHEMA.properties.samples.items);
const readingCheck: CheckOfFile = (now) => (record, name) => {
  const words = readingSchema(record);
  if (words !== null) return name.schema(words);
  const problem = readingProblem(record as HeartRateReading, now, name.at);
  return problem === null ? null : name.told(problem);
};

/** Heart-rate minutes, as an export holds them. */
const heartRateMinuteSchema = schemaCheck(HEART_RATE_MINUTE_JSON_SCHEMA);
const heartRateMinuteCheck: CheckOfFile = (now) => {
  const seen = new Map<number, string>();
  return (record, name) => {
    const words = heartRateMinuteSchema(record);
    if (words !== null) return name.schema(words);
    const minute = record as HeartRateMinute;
    const problem = heartRateMinuteProblem(minute, now, name.at);
    if (problem !== null) return name.told(problem);
    return repeatProblem(seen, minute.start_time, name, 'start_time', 'minute');
  };
};

/** Sleep: the route's body schema and sessionProblem; overlaps within the file are found once all are read. */
const sleepSchema = schemaCheck(SLEEP_SESSION_BODY_JSON_SCHEMA);
const sleepCheck: CheckOfFile = (now) => (record, name) => {
  const words = sleepSchema(record);
  if (words !== null) return name.schema(words);
  const problem = sessionProblem(record as SleepSessionInput, now, name.at);
  return problem === null ? null : name.told(problem);
};

/** Weight: the route's body schema and weightProblem; a time twice is refused (the second would replace the first). */
const weightSchema = schemaCheck(WEIGHT_BODY_JSON_SCHEMA);
const weightCheck: CheckOfFile = (now) => {
  const seen = new Map<number, string>();
  return (record, name) => {
    const words = weightSchema(record);
    if (words !== null) return name.schema(words);
    const problem = weightProblem(record as WeightBody, now, name.at);
    if (problem !== null) return name.told(problem);
    return repeatProblem(seen, (record as WeightBody).time, name, 'time', 'time');
  };
};

/** Each kind's record, as an export holds it (heart rate as stored minutes). */
const EXPORT_CHECKS: Record<DataKind, CheckOfFile> = {
  ...perSumKind((metric) => (metric === 'steps' ? stepsCheck : sumCheck(metric))),
  heartrate: heartRateMinuteCheck,
  sleep: sleepCheck,
  weight: weightCheck,
};

/** Each kind's file of its own: the CSV columns (null: JSON lines only), the record check (heart rate as readings). */
const KIND_FILES: Record<DataKind, { columns: readonly string[] | null; check: CheckOfFile }> = {
  ...perSumKind((metric) => ({ columns: ['start_time', 'value'], check: EXPORT_CHECKS[metric] })),
  heartrate: { columns: ['time', 'bpm'], check: readingCheck },
  sleep: { columns: null, check: sleepCheck },
  weight: { columns: ['time', 'kg', 'fat_percent'], check: weightCheck },
};

export function isDataKind(value: string): value is DataKind {
  return (DATA_KINDS as readonly string[]).includes(value);
}

/**
 * A file of one kind: CSV lines with the kind's columns (a header line of their names may come
 * first; weight's fat_percent may be left out) or JSON lines, one record an object of the shape the
 * kind's upload takes; blank lines and `#` comments are skipped. Throws ImportFileError.
 */
export function parseKindFile(kind: DataKind, text: string, now: number): ImportedFile {
  const { columns } = KIND_FILES[kind];
  const check = KIND_FILES[kind].check(now);
  const records: unknown[] = [];
  const sleepNames: string[] = [];
  const lines = text.split(/\r?\n/);
  const header = columns && new RegExp(`^${columns.map((column) => `"?${column}"?`).join('\\s*,\\s*')}$`);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (records.length === 0 && header?.test(line)) continue;
    const name = lineName(i + 1);
    const record = line.startsWith('{') ? jsonLine(line) : columns ? csvLine(line, columns) : 'must be a JSON object (sleep sessions are JSON lines, one session a line)';
    if (typeof record === 'string') throw new ImportFileError(name.told(record));
    const problem = check(record, name);
    if (problem !== null) throw new ImportFileError(problem);
    records.push(record);
    if (kind === 'sleep') sleepNames.push(name.ref);
  }
  if (kind === 'sleep') overlapsWithin(records as SleepSessionInput[], sleepNames);
  if (kind === 'heartrate') return { records: { heartrate: minutesOfReadings(records as HeartRateReading[]) }, readings: records.length, sleepNames };
  return { records: { [kind]: records }, sleepNames };
}

/**
 * A person's export (`/account/export.json`): each kind present is imported, every record checked
 * with its kind's checks; its other fields (profile, apps, sessions) are not. Throws ImportFileError.
 */
export function parseExportFile(text: string, now: number): ImportedFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ImportFileError('is not an export of Stride (not JSON); give --kind for a CSV or JSON lines file');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new ImportFileError('is not an export of Stride: not a JSON object; give --kind for a CSV or JSON lines file');
  const exported = data as Record<string, unknown>;
  const kinds = DATA_KINDS.filter((kind) => kind in exported);
  if (kinds.length === 0) throw new ImportFileError(`holds none of ${DATA_KINDS.join(', ')}`);
  const records: PersonRecords = {};
  const sleepNames: string[] = [];
  for (const kind of kinds) {
    const list = exported[kind];
    if (!Array.isArray(list)) throw new ImportFileError(`${kind} must be an array`);
    const check = EXPORT_CHECKS[kind](now);
    for (let index = 0; index < list.length; index++) {
      const name = placeName(kind, index);
      const problem = check(list[index], name);
      if (problem !== null) throw new ImportFileError(problem);
      if (kind === 'sleep') sleepNames.push(name.ref);
    }
    (records as Record<DataKind, unknown[]>)[kind] = list;
  }
  if (records.sleep) overlapsWithin(records.sleep, sleepNames);
  return { records, sleepNames };
}

/** Refuses two sessions of the file that overlap or start together, as the API refuses the second with 409. */
function overlapsWithin(sessions: readonly SleepSessionInput[], names: readonly string[]): void {
  const order = sessions.map((_, index) => index).sort((a, b) => sessions[a]!.start_time - sessions[b]!.start_time || a - b);
  for (let i = 1; i < order.length; i++) {
    const [earlier, later] = [order[i - 1]!, order[i]!];
    if (sessionsOverlap(sessions[earlier]!, sessions[later]!)) {
      const [first, second] = earlier < later ? [earlier, later] : [later, earlier];
      throw new ImportFileError(`${names[second]}: the session overlaps the session of ${names[first]}; one session at a time`);
    }
  }
}

function jsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return 'is not valid JSON';
  }
}

/** A CSV line as a record of `columns` (numbers where a field is one); the last column may be left out when there are three. */
function csvLine(line: string, columns: readonly string[]): Record<string, unknown> | string {
  const fields = line.split(',').map((field) => field.trim());
  const optionalLast = columns.length > 2;
  if (fields.length !== columns.length && !(optionalLast && fields.length === columns.length - 1)) return `must be ${columns.join(',')}`;
  const record: Record<string, unknown> = {};
  fields.forEach((field, index) => {
    if (field === '' && optionalLast && index === columns.length - 1) return;
    record[columns[index]!] = /^-?\d+(\.\d+)?$/.test(field) ? Number(field) : field;
  });
  return record;
}
