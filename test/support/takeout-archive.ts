/**
 * Google Takeout archives of Fitbit data made for tests and the bench: a made-up person's days in
 * the shapes Fitbit's export writes (docs/takeout.md, "What is read"), as a real zip file on disk
 * (yazl, each file made only when the zip is written, so a year of heart rate never sits in
 * memory), and what Stride must hold once the archive is imported — the test's own model, worked
 * out with luxon from the UTC instants the made-up device recorded, not by the code under test.
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DateTime } from 'luxon';
import yazl from 'yazl';

export interface TakeoutFile {
  /** Its path in the archive. */
  name: string;
  /** Its content, made when the zip is written. */
  content: () => string | Buffer;
}

/** A made-up person's history in an archive. */
export interface History {
  /** The zone the device's clock showed (the archive's Profile.csv names it unless `profileZone` is null). */
  zone: string;
  /** The local dates, YYYY-MM-DD, in order. */
  dates: string[];
  /** Seconds between heart-rate readings; null: no heart rate. */
  heartRateEvery?: number | null;
  /** Waking hours of the minute metrics, local [from, to). */
  waking?: [number, number];
  /** A weighing every this many days (at 07:31:05 local); null: none. */
  weighEvery?: number | null;
  weightUnit?: 'kg' | 'lb';
  sleep?: boolean;
  /** What Profile.csv says of the zone: the zone (default), another name, or null for no Profile.csv. */
  profileZone?: string | null;
  seed?: number;
}

export interface ExpectedMinute {
  start_time: number;
  value: number;
}
export interface ExpectedHeartRate {
  start_time: number;
  avg: number;
  min: number;
  max: number;
}
export interface ExpectedSleep {
  start_time: number;
  end_time: number;
  stages: Array<{ stage: string; start_time: number; end_time: number }>;
}
export interface ExpectedWeight {
  time: number;
  kg: number;
  fat_percent: number | null;
}

/** What Stride holds once the archive is imported, in the API's units, by time. */
export interface Expected {
  steps: ExpectedMinute[];
  distance: ExpectedMinute[];
  calories: ExpectedMinute[];
  heartrate: ExpectedHeartRate[];
  /** Heart-rate readings in the archive. */
  readings: number;
  sleep: ExpectedSleep[];
  weight: ExpectedWeight[];
}

export const GLOBAL = 'Takeout/Fitbit/Global Export Data';

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const two = (n: number) => String(n).padStart(2, '0');

/** The zone's offset in seconds at an instant, looked up once per zone and hour (a year of readings is millions). */
const offsets = new Map<string, number>();
function offsetAt(utc: number, zone: string): number {
  const hour = utc - (utc % 3600);
  const key = `${zone} ${hour}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    if (offsets.size > 100_000) offsets.clear();
    offset = DateTime.fromSeconds(hour, { zone }).offset * 60;
    offsets.set(key, offset);
  }
  return offset;
}

/** The local date (YYYY-MM-DD) of an instant on the zone's clock. */
function localDate(utc: number, zone: string): string {
  return new Date((utc + offsetAt(utc, zone)) * 1000).toISOString().slice(0, 10);
}

/** Fitbit's `MM/DD/YY HH:MM:SS` of an instant on the zone's clock. */
export function listTime(utc: number, zone: string): string {
  const local = new Date((utc + offsetAt(utc, zone)) * 1000);
  return `${two(local.getUTCMonth() + 1)}/${two(local.getUTCDate())}/${two(local.getUTCFullYear() % 100)} ${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}`;
}

/** Fitbit's sleep `YYYY-MM-DDTHH:MM:SS.000` of an instant on the zone's clock. */
function isoLocal(utc: number, zone: string): string {
  return `${DateTime.fromSeconds(utc, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss")}.000`;
}

const startOfDate = (date: string, zone: string) => DateTime.fromISO(date, { zone }).startOf('day');

/** The made-up device's heart rate at an instant. */
const bpmAt = (utc: number) => 50 + Math.floor(40 * Math.abs(Math.sin(utc / 3000))) + (utc % 7);

/** The instants of the heart-rate file of `date` (its UTC day), those of the history's local dates only. */
function heartRateInstants(date: string, every: number, zone: string, localDates: ReadonlySet<string>): number[] {
  const dayStart = Date.parse(`${date}T00:00:00Z`) / 1000;
  const instants: number[] = [];
  for (let utc = dayStart; utc < dayStart + 86_400; utc += every) {
    // Only instants of the history's local dates, so that every expected minute is imported.
    if (localDates.has(localDate(utc, zone))) instants.push(utc);
  }
  return instants;
}

/**
 * The archive's heart-rate readings as `POST /v1/users/me/heartrate/` takes them, a UTC day (a
 * file of the archive) at a time: the same data sent through the API (the bench compares the
 * bytes either way stores).
 */
export function* heartRateUploads(history: History): Generator<Array<{ time: number; bpm: number }>> {
  const every = history.heartRateEvery === undefined ? 15 : history.heartRateEvery;
  if (every === null) return;
  const localDates = new Set(history.dates);
  for (const date of history.dates) yield heartRateInstants(date, every, history.zone, localDates).map((time) => ({ time, bpm: bpmAt(time) }));
}

/** The files of the history's archive, and what Stride must hold after importing it. */
export function takeoutHistory(history: History): { files: TakeoutFile[]; expected: Expected } {
  const { zone, dates } = history;
  const heartRateEvery = history.heartRateEvery === undefined ? 15 : history.heartRateEvery;
  const [wakeFrom, wakeTo] = history.waking ?? [7, 23];
  const weighEvery = history.weighEvery === undefined ? 7 : history.weighEvery;
  const unit = history.weightUnit ?? 'kg';
  const seed = history.seed ?? 1;
  const expected: Expected = { steps: [], distance: [], calories: [], heartrate: [], readings: 0, sleep: [], weight: [] };
  const files: TakeoutFile[] = [];

  // Minute metrics: files of up to 30 dates each, named by their first date, as Fitbit's export.
  for (let first = 0; first < dates.length; first += 30) {
    const chunk = dates.slice(first, first + 30);
    const rows: Record<'steps' | 'distance' | 'calories', Array<{ dateTime: string; value: string }>> = { steps: [], distance: [], calories: [] };
    for (const date of chunk) {
      const next = random(seed * 7919 + Date.parse(date) / 86_400_000);
      const start = startOfDate(date, zone);
      for (let utc = start.plus({ hours: wakeFrom }).toSeconds(); utc < start.plus({ hours: wakeTo }).toSeconds(); utc += 60) {
        const steps = next() < 0.3 ? 0 : Math.floor(next() * 140);
        const centimetres = Math.floor(steps * 72 + next() * 50);
        const kcal = Math.floor((1 + next() * 6) * 100) / 100;
        const time = listTime(utc, zone);
        const written = kcal.toFixed(2);
        rows.steps.push({ dateTime: time, value: String(steps) });
        rows.distance.push({ dateTime: time, value: String(centimetres) });
        rows.calories.push({ dateTime: time, value: written });
        expected.steps.push({ start_time: utc, value: steps });
        expected.distance.push({ start_time: utc, value: Math.round(centimetres / 100) });
        expected.calories.push({ start_time: utc, value: Math.round(Number(written) * 10) / 10 });
      }
    }
    for (const kind of ['steps', 'distance', 'calories'] as const) {
      const list = rows[kind];
      files.push({ name: `${GLOBAL}/${kind}-${chunk[0]}.json`, content: () => JSON.stringify(list) });
    }
  }

  // Heart rate: a file per date, holding the readings of that UTC day (so a file's rows fall on two local dates).
  if (heartRateEvery !== null) {
    const byMinute = new Map<number, number[]>();
    const localDates = new Set(dates);
    for (const date of dates) {
      const instants = heartRateInstants(date, heartRateEvery, zone, localDates);
      expected.readings += instants.length;
      for (const utc of instants) {
        const bpm = bpmAt(utc);
        const minute = utc - (utc % 60);
        const list = byMinute.get(minute);
        if (list) list.push(bpm);
        else byMinute.set(minute, [bpm]);
      }
      files.push({
        name: `${GLOBAL}/heart_rate-${date}.json`,
        content: () => {
          const parts: string[] = [];
          for (const utc of instants) {
            const bpm = bpmAt(utc);
            parts.push(`{"dateTime":"${listTime(utc, zone)}","value":{"bpm":${bpm},"confidence":${utc % 4}}}`);
          }
          return `[${parts.join(',')}]`;
        },
      });
    }
    for (const [start_time, bpms] of [...byMinute].sort((a, b) => a[0] - b[0])) {
      expected.heartrate.push({ start_time, avg: Math.round(bpms.reduce((a, b) => a + b, 0) / bpms.length), min: Math.min(...bpms), max: Math.max(...bpms) });
    }
  }

  // Sleep: a night ending on each date (from 23:10-ish the evening before), in files of 30 dates.
  if (history.sleep !== false) {
    for (let first = 0; first < dates.length; first += 30) {
      const chunk = dates.slice(first, first + 30);
      const logs: unknown[] = [];
      for (const date of chunk) {
        const next = random(seed * 104_729 + Date.parse(date) / 86_400_000);
        const classic = next() < 0.25;
        const start = startOfDate(date, zone).minus({ days: 1 }).set({ hour: 23, minute: 10 + Math.floor(next() * 20), second: 30 }).toSeconds();
        const levels = classic ? ['asleep', 'restless', 'asleep', 'awake', 'asleep'] : ['wake', 'light', 'deep', 'light', 'rem', 'light', 'wake'];
        const data: Array<{ dateTime: string; level: string; seconds: number }> = [];
        const stages: ExpectedSleep['stages'] = [];
        let at = start;
        for (let i = 0; i < 14; i++) {
          const level = levels[i % levels.length]!;
          const seconds = 30 * Math.floor(20 + next() * 60);
          data.push({ dateTime: isoLocal(at, zone), level, seconds });
          const stage = { wake: 'awake', light: 'light', deep: 'deep', rem: 'rem', asleep: 'light', restless: 'awake', awake: 'awake' }[level]!;
          const last = stages[stages.length - 1];
          if (last && last.stage === stage) last.end_time += seconds;
          else stages.push({ stage, start_time: at, end_time: at + seconds });
          at += seconds;
        }
        const minutesAsleep = Math.round(stages.filter((s) => s.stage !== 'awake').reduce((sum, s) => sum + s.end_time - s.start_time, 0) / 60);
        logs.push({
          logId: 26_000_000_000 + Math.floor(start / 60),
          dateOfSleep: DateTime.fromSeconds(at, { zone }).toISODate(),
          startTime: isoLocal(start, zone),
          endTime: isoLocal(at, zone),
          duration: (at - start) * 1000,
          minutesToFallAsleep: 0,
          minutesAsleep,
          minutesAwake: Math.round((at - start) / 60) - minutesAsleep,
          minutesAfterWakeup: 0,
          timeInBed: Math.round((at - start) / 60),
          efficiency: 90,
          type: classic ? 'classic' : 'stages',
          infoCode: 0,
          levels: { summary: {}, data, ...(classic ? {} : { shortData: [] }) },
          mainSleep: true,
        });
        expected.sleep.push({ start_time: start, end_time: at, stages });
      }
      files.push({ name: `${GLOBAL}/sleep-${chunk[0]}.json`, content: () => JSON.stringify(logs) });
    }
  }

  // Weight: a weighing every `weighEvery` dates at 07:31:05, in the profile's unit, in files of 30 dates.
  if (weighEvery !== null) {
    for (let first = 0; first < dates.length; first += 30) {
      const chunk = dates.slice(first, first + 30);
      const logs: unknown[] = [];
      chunk.forEach((date, i) => {
        if ((first + i) % weighEvery !== 0) return;
        const time = startOfDate(date, zone).set({ hour: 7, minute: 31, second: 5 }).toSeconds();
        const kg = Math.round((70 + ((first + i) % 10) * 0.37) * 100) / 100;
        const fat = (first + i) % 2 === 0 ? Math.round((20 + ((first + i) % 5) * 0.3) * 100) / 100 : null;
        // The archive writes what the person's unit shows; Stride keeps kilograms to the hundredth.
        const written = unit === 'kg' ? kg : Math.round((kg / 0.45359237) * 1000) / 1000;
        const local = DateTime.fromSeconds(time, { zone });
        logs.push({
          logId: 1_600_000_000_000 + time,
          weight: written,
          bmi: Math.round((kg / 1.78 ** 2) * 100) / 100,
          ...(fat === null ? {} : { fat }),
          date: `${two(local.month)}/${two(local.day)}/${two(local.year % 100)}`,
          time: local.toFormat('HH:mm:ss'),
          source: 'Aria',
        });
        expected.weight.push({ time, kg: Math.round(written * (unit === 'kg' ? 1 : 0.45359237) * 100) / 100, fat_percent: fat });
      });
      files.push({ name: `${GLOBAL}/weight-${chunk[0]}.json`, content: () => JSON.stringify(logs) });
    }
  }

  // Resting heart rate (read, not stored), a kind Stride does not hold, and a folder it does not read.
  files.push({ name: `${GLOBAL}/resting_heart_rate-${dates[0]}.json`, content: () => JSON.stringify(dates.map((date) => ({ dateTime: `${date.slice(5, 7)}/${date.slice(8)}/${date.slice(2, 4)} 00:00:00`, value: { date: `${date.slice(5, 7)}/${date.slice(8)}/${date.slice(0, 4)}`, value: 58.4, error: 6.2 } }))) });
  files.push({ name: `${GLOBAL}/altitude-${dates[0]}.json`, content: () => JSON.stringify([{ dateTime: listTime(startOfDate(dates[0]!, zone).plus({ hours: 9 }).toSeconds(), zone), value: '20' }]) });
  files.push({ name: 'Takeout/Fitbit/Sleep Score/sleep_score.csv', content: () => 'sleep_log_entry_id,timestamp,overall_score\n1,2024-01-01T07:00:00Z,80\n' });
  if (history.profileZone !== null) {
    const profileZone = history.profileZone ?? zone;
    files.push({ name: 'Takeout/Fitbit/Your Profile/Profile.csv', content: () => profileCsv(profileZone, unit === 'kg' ? 'METRIC' : 'POUND') });
  }
  files.push({ name: 'Takeout/archive_browser.html', content: () => '<html><body>Takeout</body></html>' });

  for (const kind of ['steps', 'distance', 'calories', 'heartrate', 'sleep', 'weight'] as const) (expected[kind] as Array<{ start_time?: number; time?: number }>).sort((a, b) => (a.start_time ?? a.time!) - (b.start_time ?? b.time!));
  return { files, expected };
}

/** What a data event of an import tells: the dates, and per date one range covering what changed on it. */
export interface ToldChange {
  dates: string[];
  ranges?: Array<{ start_time: number; end_time: number }>;
}

/**
 * The events an import of the archive into an empty account tells, per type, for a person whose
 * zone is `zone` (docs/webhooks.md): each date the kind's records fall on and, per date, from its
 * first record's start to its last one's end — a minute series' minutes and a session dated by its
 * end, as the API dates them. Steps change the distance read, so distance's dates and ranges
 * cover the steps' minutes too. Weighings tell dates alone.
 */
export function expectedEvents(expected: Expected, zone: string): Record<string, ToldChange> {
  const told = (spans: ReadonlyArray<{ date: string; start_time: number; end_time: number }>): ToldChange => {
    const byDate = new Map<string, { start_time: number; end_time: number }>();
    for (const { date, start_time, end_time } of spans) {
      const range = byDate.get(date);
      if (range === undefined) byDate.set(date, { start_time, end_time });
      else byDate.set(date, { start_time: Math.min(range.start_time, start_time), end_time: Math.max(range.end_time, end_time) });
    }
    const dates = [...byDate.keys()].sort();
    return { dates, ranges: dates.map((date) => byDate.get(date)!) };
  };
  const minutes = (records: ReadonlyArray<{ start_time: number }>) => records.map(({ start_time }) => ({ date: localDate(start_time, zone), start_time, end_time: start_time + 60 }));
  return {
    'steps.updated': told(minutes(expected.steps)),
    'distance.updated': told(minutes([...expected.steps, ...expected.distance])),
    'calories.updated': told(minutes(expected.calories)),
    'heartrate.updated': told(minutes(expected.heartrate)),
    'sleep.updated': told(expected.sleep.map(({ start_time, end_time }) => ({ date: localDate(end_time, zone), start_time, end_time }))),
    'body.updated': { dates: [...new Set(expected.weight.map(({ time }) => localDate(time, zone)))].sort() },
  };
}

/** Fitbit's Profile.csv (a header and one line), with a comma and a quote in a quoted field. */
export function profileCsv(zone: string, weightUnit: string): string {
  const header = 'id,full_name,first_name,last_name,display_name_setting,display_name,username,email_address,date_of_birth,child,country,state,city,timezone,locale,member_since,about_me,start_of_week,sleep_tracking,time_display_format,gender,height,weight,stride_length_walking,stride_length_running,weight_unit,distance_unit,height_unit,water_unit,glucose_unit,swim_unit';
  const values = ['ABC123', 'Ada Walker', 'Ada', 'Walker', 'name', 'Ada', '', 'ada@example.test', '1990-01-01', 'false', 'DE', '', '', zone, 'en_US', '2016-05-01', '"Walks, ""a lot"""', 'MONDAY', 'Normal', '24hour', 'FEMALE', '170.0', '70.0', '72.0', '95.0', weightUnit, 'METRIC', 'METRIC', 'METRIC', 'METRIC', 'METRIC'];
  return `${header}\n${values.join(',')}\n`;
}

/** Writes `files` as a zip at `path`, each file made when its turn comes. */
export async function writeTakeoutZip(path: string, files: readonly TakeoutFile[]): Promise<void> {
  const zip = new yazl.ZipFile();
  const mtime = new Date('2024-12-01T00:00:00Z');
  for (const file of files) {
    zip.addReadStreamLazy(file.name, { mtime }, (done) => {
      const content = file.content();
      done(null, Readable.from([typeof content === 'string' ? Buffer.from(content) : content]));
    });
  }
  zip.end();
  await pipeline(zip.outputStream as Readable, createWriteStream(path));
}

/** The local dates from `first` for `count` days. */
export function datesFrom(first: string, count: number): string[] {
  const start = DateTime.fromISO(first, { zone: 'UTC' });
  return Array.from({ length: count }, (_, i) => start.plus({ days: i }).toISODate()!);
}
