/**
 * Each kind of a person's records as the downloads of the account page write them (docs/web.md,
 * "Your data"): in the JSON export, each record in the shape `stride import` takes back (uploads'
 * bodies, heart rate as stored minutes); in a kind's CSV, one line per record (per stage, for
 * sleep) under a header. Records are read a page at a time, so memory stays flat whatever the history.
 */
import { weightView } from '../../domain/body-weight.js';
import { SUM_KINDS, type DataKind } from '../../domain/person-data.js';
import type { Stores } from '../../store/stores.js';

/**
 * Records read per statement while an export streams: memory stays flat whatever the history, and
 * one page (its statement, which SQLite runs synchronously, and its text) holds the event loop a
 * millisecond or two, not tens. Sleep sessions carry their stages (about twenty a night).
 */
const EXPORT_PAGE = 1_000;
const SLEEP_EXPORT_PAGE = 100;

/** The next turn of the event loop, after the I/O waiting: other requests go between two pages. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The pages of one kind of a person's records, read as the reader asks for more: `read` gives the
 * records after a position, `positionOf` a record's position. Each page waits for the next turn: a
 * SQLite statement answers without one, so a reader that keeps up would otherwise chain page after
 * page without letting any other request in.
 */
async function* pagesOf<T>(read: (after: number) => Promise<T[]>, positionOf: (record: T) => number): AsyncGenerator<T[]> {
  let after = -1;
  for (;;) {
    await nextTurn();
    const page = await read(after);
    if (page.length === 0) return;
    yield page;
    after = positionOf(page[page.length - 1]!);
  }
}

/** A kind of records in both downloads. */
export interface ExportKind {
  name: DataKind;
  /** The pages of the person's records, each record as JSON text. */
  json(userId: string): AsyncGenerator<string[]>;
  /** The CSV's header line, without its line end. */
  csvHeader: string;
  /** The pages of the person's records as CSV lines, each ending its line. */
  csv(userId: string): AsyncGenerator<string>;
}

function exportKind<T>(
  name: DataKind,
  read: (userId: string, after: number) => Promise<T[]>,
  positionOf: (record: T) => number,
  json: (record: T) => string,
  csvHeader: string,
  csv: (record: T) => string,
): ExportKind {
  const pages = (userId: string) => pagesOf((after) => read(userId, after), positionOf);
  return {
    name,
    csvHeader,
    async *json(userId) {
      for await (const page of pages(userId)) yield page.map(json);
    },
    async *csv(userId) {
      for await (const page of pages(userId)) yield page.map(csv).join('');
    },
  };
}

/** Every kind, in the order the JSON export holds them (DATA_KINDS). */
export function exportKinds(stores: Stores): ExportKind[] {
  return [
    ...SUM_KINDS.map((metric) =>
      exportKind(
        metric,
        (userId, after) => stores[metric].samplesAfter(userId, after, EXPORT_PAGE),
        (s) => s.start_time,
        (s) => `{"start_time":${s.start_time},"value":${s.value}}`,
        'start_time,value',
        (s) => `${s.start_time},${s.value}\n`,
      ),
    ),
    exportKind(
      'heartrate',
      (userId, after) => stores.heartRate.samplesAfter(userId, after, EXPORT_PAGE),
      (m) => m.start_time,
      (m) => `{"start_time":${m.start_time},"avg":${m.avg},"min":${m.min},"max":${m.max}}`,
      'start_time,avg,min,max',
      (m) => `${m.start_time},${m.avg},${m.min},${m.max}\n`,
    ),
    exportKind(
      'sleep',
      (userId, after) => stores.sleep.sessionsAfter(userId, after, SLEEP_EXPORT_PAGE),
      (s) => s.start_time,
      ({ start_time, end_time, stages }) => JSON.stringify({ start_time, end_time, stages }),
      // A session's stages vary in number: a line per stage, under its session's times.
      'session_start_time,session_end_time,stage,start_time,end_time',
      (s) => s.stages.map((stage) => `${s.start_time},${s.end_time},${stage.stage},${stage.start_time},${stage.end_time}\n`).join(''),
    ),
    exportKind(
      'weight',
      (userId, after) => stores.bodyWeight.weightsAfter(userId, after, EXPORT_PAGE),
      (w) => w.time,
      (w) => {
        const { time, kg, fat_percent } = weightView(w);
        return `{"time":${time},"kg":${kg},"fat_percent":${fat_percent}}`;
      },
      // The columns `stride import --kind weight` reads; no body fat measured: empty.
      'time,kg,fat_percent',
      (w) => {
        const { time, kg, fat_percent } = weightView(w);
        return `${time},${kg},${fat_percent ?? ''}\n`;
      },
    ),
  ];
}
