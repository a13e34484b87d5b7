/**
 * Imports of Google Takeout archives (docs/takeout.md): a row per import, from its preview to its
 * end. An import runs as a series of steps, each one kind of one local day of one file of the
 * archive; each step's data is written by the kind's own store (the series merge, sleep's overlap
 * rule, weight's same-time rule) and, in that same transaction, `noteImportSteps` moves the import
 * on: where to resume, what the report gains, and the changes that wait for the import's events.
 * So a process that stops anywhere leaves an import that resumes exactly after its last step, and
 * nothing is written twice or told twice. Steps of one file whose minutes share a UTC day row are
 * written together, in one transaction, so that the row is written once.
 *
 * The steps defer their events: an import tells apps once per event type, over every date it
 * touched, when it ends (done, cancelled or failed) — in the transaction that ends it, which
 * turns the noted changes into events (store/events.ts) and forgets them. The changes wait as one
 * small row per local date the import touched (`takeout_import_dates`), merged in place by each
 * step that touches the date again, so that what waits grows with the dates, not with the steps,
 * and a step writes only its own dates. A step can be noted only by the process holding the
 * import's lease; one that lost it (it stalled past its lease, and another process took the import
 * over) has its step rolled back.
 */
import { randomBytes } from 'node:crypto';
import { SqliteAdapter, sql, type Insertable, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database, TakeoutImportDateTable, TakeoutImportTable } from '../db/schema.js';
import { mergeRanges } from './dated-ranges.js';
import { recordEvents, type DataEventType, type MinuteRange } from './events.js';
import { isId } from './identifiers.js';
import { withOwnerLocked } from './owner-lock.js';

type Q = Kysely<Database>;

/** The kinds of a Takeout archive Stride reads, in the order an import reads them. */
export const TAKEOUT_KINDS = ['steps', 'distance', 'calories', 'heartrate', 'sleep', 'weight', 'resting_heart_rate'] as const;
export type TakeoutKind = (typeof TAKEOUT_KINDS)[number];

export type ImportState = TakeoutImportTable['state'];
/** The states an import ends in (an import not confirmed in time is `expired` by the sweep instead). */
export type FinishedState = 'done' | 'cancelled' | 'failed';

/** An entry of the archive that was not imported, named by its file and its place in the file's list. */
export interface SkippedEntry {
  /** The file's path in the archive. */
  file: string;
  /** The entry's 0-based index in the file's list; null when the whole file was not read. */
  entry: number | null;
  /** A short code for counting (`out_of_range`, `future`, `malformed`, `sleep_overlap`, …). */
  code: string;
  reason: string;
}

/** Runs of local dates as day numbers since 1970-01-01, [from, to) each, ascending and apart. */
export type DayRuns = Array<[number, number]>;

/** What an import has done with one kind. */
export interface KindTally {
  /** Files of the kind read to their end. */
  files: number;
  /** Entries read: minutes, heart-rate readings, sleep sessions, weighings, resting rates. */
  entries: number;
  /** Records written: minutes, sessions, weighings. */
  written: number;
  /** Records the person already held (a device's minute, a session or weighing at the same time): kept as stored. */
  kept: number;
  /** Entries not imported (the report's `skipped` names them). */
  skipped: number;
  /** The local dates on which something was written. */
  days_written: DayRuns;
  /** The local dates read (written, kept or skipped). */
  days_read: DayRuns;
}

/** How many entries were skipped, and the first of them by name. */
export interface SkippedTally {
  total: number;
  by_code: Record<string, number>;
  /** The first MAX_NAMED_SKIPS entries skipped. */
  entries: SkippedEntry[];
}

export interface ImportReport {
  kinds: Partial<Record<TakeoutKind, KindTally>>;
  /** Files of kinds Stride does not hold, by kind (`altitude`, `exercise`, …), never read. */
  not_read: Record<string, number>;
  skipped: SkippedTally;
}

/** What a preview found of one kind. */
export interface PreviewKind {
  files: number;
  entries: number;
  /** Local dates with entries. */
  days: number;
  first_date: string | null;
  last_date: string | null;
}

/** What an archive holds, found before anything is written (domain/takeout/preview.ts). */
export interface TakeoutPreview {
  /** The zone its local times are read in, and where it came from. */
  timezone: { name: string; from: 'archive' | 'profile' };
  /** The unit of its weights, and where it came from. */
  weight_unit: { unit: 'kg' | 'lb' | 'stone'; from: 'archive' | 'bmi' | 'default' };
  kinds: Partial<Record<TakeoutKind, PreviewKind>>;
  not_read: Record<string, number>;
  /** Files that could not be read (malformed JSON, not a list), by name. */
  unreadable: SkippedEntry[];
  files_total: number;
}

/** The changes of one event type that wait for the import's event. */
export interface PendingChange {
  dates: string[];
  ranges?: MinuteRange[];
}

export type PendingEvents = Partial<Record<DataEventType, PendingChange>>;

/** An import as the domain sees it. */
export interface TakeoutImport {
  id: string;
  userId: string;
  archivePath: string;
  archiveName: string;
  archiveBytes: number;
  archiveFingerprint: string;
  ownsArchive: boolean;
  state: ImportState;
  timezone: string;
  /** Null while the archive is read (state `reading`), and for an archive refused then. */
  preview: TakeoutPreview | null;
  filesTotal: number;
  nextFile: number;
  nextPart: number;
  report: ImportReport;
  cancelRequested: boolean;
  leaseOwner: string | null;
  leaseUntil: number | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface NewImport {
  userId: string;
  archivePath: string;
  archiveName: string;
  archiveBytes: number;
  archiveFingerprint: string;
  ownsArchive: boolean;
  timezone: string;
  preview: TakeoutPreview;
  now: number;
}

/** An archive on disk, to be read in the background before the person is shown what it holds. */
export interface NewReading {
  userId: string;
  archivePath: string;
  archiveName: string;
  archiveBytes: number;
  ownsArchive: boolean;
  /** The person's zone, read again by the preview (which takes the archive's when it names one). */
  timezone: string;
  now: number;
}

/** What the background read of an archive found. */
export interface FoundPreview {
  archiveBytes: number;
  archiveFingerprint: string;
  timezone: string;
  preview: TakeoutPreview;
}

/** Where an import resumes once a step is in: the step's file and the day group after it. */
export interface ImportPosition {
  file: number;
  part: number;
}

/** One step of an import, as the domain read it from the archive. */
export interface ImportStep {
  importId: string;
  /** The process running the import: the step is noted only while it holds the lease. */
  leaseOwner: string;
  /** The lease runs on to here once the step is in. */
  leaseUntil: number;
  now: number;
  position: ImportPosition;
  kind: TakeoutKind;
  /** True when this step ends its file. */
  endsFile: boolean;
  /** Entries of the archive this step read. */
  entries: number;
  /** The local date (day number) of the step's records; null for a step without any (an unreadable file). */
  day: number | null;
  /** Entries the domain refused (values out of range, dates in the future, …). */
  skipped: SkippedEntry[];
  /** For sessions and weighings: each record's file and entry, to name one the store refuses. */
  names?: ReadonlyArray<{ file: string; entry: number }>;
}

/** One step's records, written with other steps of its file in one transaction when they share day rows. */
export interface ImportPart<T> {
  records: readonly T[];
  step: ImportStep;
}

/** What a step's write did. */
export interface StepOutcome {
  written: number;
  kept: number;
  /** Records the store refused (a session overlapping a stored one), by index, with why. */
  refused?: Array<{ index: number; code: string; reason: string }>;
  /** What the write changed, per event type, for the import's events. */
  changes: Partial<Record<DataEventType, PendingChange>>;
}

/** The step's process no longer holds the import's lease: the step is rolled back. */
export class ImportLeaseLost extends Error {
  constructor(readonly importId: string) {
    super(`the import ${importId} is run by another process now`);
  }
}

/** How many skipped entries a report names (the rest are counted). */
export const MAX_NAMED_SKIPS = 200;

export const newImportId = () => `imp_${randomBytes(12).toString('base64url')}`;

export function emptyReport(notRead: Record<string, number>): ImportReport {
  return { kinds: {}, not_read: notRead, skipped: { total: 0, by_code: {}, entries: [] } };
}

const emptyTally = (): KindTally => ({ files: 0, entries: 0, written: 0, kept: 0, skipped: 0, days_written: [], days_read: [] });

/** `runs` with the day `day` in it. */
export function addDay(runs: DayRuns, day: number): DayRuns {
  const next = runs.map((run) => [run[0], run[1]] as [number, number]);
  next.push([day, day + 1]);
  next.sort((a, b) => a[0] - b[0]);
  const merged: DayRuns = [];
  for (const run of next) {
    const last = merged[merged.length - 1];
    if (last && run[0] <= last[1]) last[1] = Math.max(last[1], run[1]);
    else merged.push(run);
  }
  return merged;
}

export const daysIn = (runs: DayRuns) => runs.reduce((sum, [from, to]) => sum + to - from, 0);

/** The report after a step: a pure function, so that a step is counted exactly when it is written. */
export function reportAfter(report: ImportReport, step: ImportStep, outcome: StepOutcome): ImportReport {
  const tally = { ...(report.kinds[step.kind] ?? emptyTally()) };
  const refused: SkippedEntry[] = (outcome.refused ?? []).map(({ index, code, reason }) => ({ file: step.names?.[index]?.file ?? '', entry: step.names?.[index]?.entry ?? null, code, reason }));
  const skipped = [...step.skipped, ...refused];
  tally.files += step.endsFile ? 1 : 0;
  tally.entries += step.entries;
  tally.written += outcome.written;
  tally.kept += outcome.kept;
  tally.skipped += skipped.length;
  if (step.day !== null) {
    tally.days_read = addDay(tally.days_read, step.day);
    if (outcome.written > 0) tally.days_written = addDay(tally.days_written, step.day);
  }
  const by_code = { ...report.skipped.by_code };
  for (const entry of skipped) by_code[entry.code] = (by_code[entry.code] ?? 0) + 1;
  const named = report.skipped.entries.length < MAX_NAMED_SKIPS ? [...report.skipped.entries, ...skipped.slice(0, MAX_NAMED_SKIPS - report.skipped.entries.length)] : report.skipped.entries;
  return {
    ...report,
    kinds: { ...report.kinds, [step.kind]: tally },
    skipped: { total: report.skipped.total + skipped.length, by_code, entries: named },
  };
}

/** A step and what its write did, as noted in the write's transaction. */
export interface StepNote {
  step: ImportStep;
  outcome: StepOutcome;
}

/**
 * Inside a step's write transaction: moves the import on past the step (its position, report and
 * lease) and notes the step's changes on the dates they touched. Throws ImportLeaseLost when the
 * step's process lost the lease, which rolls the whole step back.
 */
export function noteImportStep(trx: Q, step: ImportStep, outcome: StepOutcome): Promise<void> {
  return noteImportSteps(trx, [{ step, outcome }]);
}

/**
 * noteImportStep for steps of one import written in one transaction, in their order: the report
 * counts each, the import moves on past the last, and the import's row is written once.
 */
export async function noteImportSteps(trx: Q, notes: readonly StepNote[]): Promise<void> {
  const last = notes[notes.length - 1]!.step;
  const row = await trx.selectFrom('takeout_imports').select(['report', 'lease_owner']).where('id', '=', last.importId).executeTakeFirst();
  if (!row || row.lease_owner !== last.leaseOwner) throw new ImportLeaseLost(last.importId);
  let report = JSON.parse(row.report) as ImportReport;
  for (const { step, outcome } of notes) report = reportAfter(report, step, outcome);
  const updated = await trx
    .updateTable('takeout_imports')
    .set({
      report: JSON.stringify(report),
      next_file: last.position.file,
      next_part: last.position.part,
      lease_until: last.leaseUntil,
      updated_at: last.now,
    })
    .where('id', '=', last.importId)
    .where('lease_owner', '=', last.leaseOwner)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) throw new ImportLeaseLost(last.importId);
  await noteChanges(trx, last.importId, notes.map((note) => note.outcome.changes));
}

/**
 * The bit of each data event type an import notes, in `takeout_import_dates.types`. Stored: a type
 * keeps its bit (migration 023 writes the same ones). A metric that no import writes has none.
 */
const TYPE_BITS: Readonly<Partial<Record<DataEventType, number>>> = {
  'steps.updated': 1,
  'distance.updated': 2,
  'calories.updated': 4,
  'heartrate.updated': 8,
  'sleep.updated': 16,
  'body.updated': 32,
};

type RangeColumn = 'steps' | 'distance' | 'calories' | 'heartrate' | 'sleep';

/** The columns holding a type's range on a date (`<prefix>_start`, `<prefix>_end`); body.updated tells dates only. */
const RANGE_COLUMNS: Readonly<Partial<Record<DataEventType, RangeColumn | null>>> = {
  'steps.updated': 'steps',
  'distance.updated': 'distance',
  'calories.updated': 'calories',
  'heartrate.updated': 'heartrate',
  'sleep.updated': 'sleep',
  'body.updated': null,
};

type WaitingDate = Insertable<TakeoutImportDateTable>;

const DAY_MS = 86_400_000;
/** A local date (YYYY-MM-DD) as days since 1970-01-01, and back. */
const dayNumberOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOfDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

function waitingDate(importId: string, day: number): WaitingDate {
  const row: WaitingDate = { import_id: importId, day, types: 0 };
  for (const prefix of Object.values(RANGE_COLUMNS)) {
    if (prefix != null) Object.assign(row, { [`${prefix}_start`]: null, [`${prefix}_end`]: null });
  }
  return row;
}

/**
 * Each change joined into its dates' rows: the type's bit set and, per date, the range widened to
 * cover the change's (a change tells one range per date: `ranges[i]` is `dates[i]`'s).
 */
async function noteChanges(trx: Q, importId: string, changes: ReadonlyArray<StepOutcome['changes']>): Promise<void> {
  const byDay = new Map<number, WaitingDate>();
  for (const stepChanges of changes) {
    for (const [type, change] of Object.entries(stepChanges) as Array<[DataEventType, PendingChange]>) {
      const prefix = RANGE_COLUMNS[type];
      const paired = change.ranges !== undefined && change.ranges.length === change.dates.length;
      change.dates.forEach((date, i) => {
        const day = dayNumberOf(date);
        let row = byDay.get(day);
        if (row === undefined) byDay.set(day, (row = waitingDate(importId, day)));
        const bit = TYPE_BITS[type];
        if (bit === undefined) throw new Error(`an import cannot note ${type}`);
        row.types = Number(row.types) | bit;
        if (prefix == null || !paired) return;
        const range = change.ranges![i]!;
        const fields = row as Record<string, number | null>;
        const [start, end] = [`${prefix}_start`, `${prefix}_end`];
        fields[start] = fields[start] === null ? range.start_time : Math.min(fields[start]!, range.start_time);
        fields[end] = fields[end] === null ? range.end_time : Math.max(fields[end]!, range.end_time);
      });
    }
  }
  if (byDay.size === 0) return;
  const sqlite = trx.getExecutor().adapter instanceof SqliteAdapter;
  // The lower start and the higher end of the stored range and this one, either possibly null.
  const widened = (column: string, lower: boolean) => {
    const [stored, given] = [sql.ref(`takeout_import_dates.${column}`), sql.ref(`excluded.${column}`)];
    if (!sqlite) return lower ? sql<number>`least(${stored}, ${given})` : sql<number>`greatest(${stored}, ${given})`;
    return lower ? sql<number>`coalesce(min(${stored}, ${given}), ${stored}, ${given})` : sql<number>`coalesce(max(${stored}, ${given}), ${stored}, ${given})`;
  };
  const merged: Record<string, RawBuilder<number>> = { types: sql<number>`${sql.ref('takeout_import_dates.types')} | ${sql.ref('excluded.types')}` };
  for (const prefix of Object.values(RANGE_COLUMNS)) {
    if (prefix == null) continue;
    merged[`${prefix}_start`] = widened(`${prefix}_start`, true);
    merged[`${prefix}_end`] = widened(`${prefix}_end`, false);
  }
  await trx
    .insertInto('takeout_import_dates')
    .values([...byDay.values()])
    .onConflict((oc) => oc.columns(['import_id', 'day']).doUpdateSet(merged))
    .execute();
}

/** The import's waiting changes, per event type over the dates it touched (read once, when it ends). */
async function pendingOf(trx: Q, importId: string): Promise<PendingEvents> {
  const rows = await trx.selectFrom('takeout_import_dates').selectAll().where('import_id', '=', importId).orderBy('day').execute();
  const pending: PendingEvents = {};
  for (const [type, bit] of Object.entries(TYPE_BITS) as Array<[DataEventType, number]>) {
    const prefix = RANGE_COLUMNS[type];
    const dates: string[] = [];
    const ranges: MinuteRange[] = [];
    for (const row of rows) {
      if ((Number(row.types) & bit) === 0) continue;
      dates.push(dateOfDay(Number(row.day)));
      const fields = row as unknown as Record<string, number | string | null>;
      const [start, end] = prefix == null ? [null, null] : [fields[`${prefix}_start`], fields[`${prefix}_end`]];
      if (start !== null && start !== undefined && end !== null && end !== undefined) ranges.push({ start_time: Number(start), end_time: Number(end) });
    }
    if (dates.length === 0) continue;
    // A range per date, as steps note them; a date noted without one tells the dates with the ranges joined, as joinChanges does.
    if (ranges.length === dates.length) pending[type] = { dates, ranges };
    else if (ranges.length === 0) pending[type] = { dates };
    else pending[type] = { dates, ranges: mergeRanges(ranges) };
  }
  return pending;
}

/** What starting an import gave. */
export type StartOutcome = { started: TakeoutImport } | { notFound: true } | { notPreviewed: TakeoutImport } | { busy: TakeoutImport };

/** What a cancel gave: the import as it is now (cancelled, or running until its next step sees the request). */
export type CancelOutcome = { cancelling: TakeoutImport } | { notFound: true } | { finished: TakeoutImport };

/** What runners claim: imports to run (queued, or running without a live lease), or archives to read (state `reading`). */
export type ImportWork = 'import' | 'preview';

export interface TakeoutImportStore {
  /** A previewed import of the person's archive. */
  create(input: NewImport): Promise<TakeoutImport>;
  /** An import of an archive just stored, waiting to be read (state `reading`) by a runner. */
  createReading(input: NewReading): Promise<TakeoutImport>;
  /**
   * The read of `id` held by `owner` found this: the import is previewed, its lease given back.
   * False when `owner` no longer holds it or it is no longer being read (discarded meanwhile).
   */
  previewFound(id: string, owner: string, found: FoundPreview, now: number): Promise<boolean>;
  /** The read of `id` held by `owner` refused the archive: the import fails with `error`. False as previewFound. */
  previewRefused(id: string, owner: string, error: string, now: number): Promise<boolean>;
  /**
   * Imports never confirmed: read or being read, untouched since before `before`. Each is marked
   * `expired` under its person's lock, after `removeArchive` ran for it in that transaction (so
   * that a confirmation cannot slip in between); the expired imports are returned.
   */
  expireUnconfirmed(before: number, now: number, removeArchive: (imported: TakeoutImport) => Promise<void>): Promise<TakeoutImport[]>;
  /** The person's import `id`; null when they have none by that id (another person's included). */
  get(userId: string, id: string): Promise<TakeoutImport | null>;
  /** The person's imports, newest first. */
  list(userId: string, limit: number): Promise<TakeoutImport[]>;
  /**
   * Queues a previewed import, unless the person has another queued or running: checked and
   * written under the person's lock, so two starts at once queue at most one.
   */
  start(userId: string, id: string, now: number): Promise<StartOutcome>;
  /**
   * Cancels the person's import: a previewed or queued one, or one whose runner is gone, ends now
   * (its changes told); a running one is asked to, and ends at its runner's next step.
   */
  cancel(userId: string, id: string, now: number, coalesceSeconds: number): Promise<CancelOutcome>;
  /**
   * Takes the lease of an import that is queued, or running without a live lease (its process
   * stopped): the oldest, or `importId` only. Null when there is none to take.
   */
  claim(owner: string, now: number, leaseUntil: number, importId?: string, work?: ImportWork): Promise<TakeoutImport | null>;
  /** A step without a write of data (a file unread, a kind Stride only counts): noted alone. */
  noteStep(userId: string, step: ImportStep): Promise<void>;
  /** True when the person asked to cancel the import. */
  cancelRequested(id: string): Promise<boolean>;
  /**
   * Ends the import held by `owner`: its waiting changes become one event per type (to the apps
   * that read it), in the same transaction as the new state. False when `owner` no longer holds it.
   */
  finish(id: string, owner: string, state: FinishedState, error: string | null, now: number, coalesceSeconds: number): Promise<boolean>;
  /** Gives the lease back (a server shutting down): another process may carry the import on at once. */
  release(id: string, owner: string): Promise<void>;
}

function importOf(row: Selectable<TakeoutImportTable>): TakeoutImport {
  const optional = (value: number | string | null) => (value === null ? null : Number(value));
  return {
    id: row.id,
    userId: row.user_id,
    archivePath: row.archive_path,
    archiveName: row.archive_name,
    archiveBytes: Number(row.archive_bytes),
    archiveFingerprint: row.archive_fingerprint,
    ownsArchive: Number(row.owns_archive) === 1,
    state: row.state,
    timezone: row.timezone,
    preview: JSON.parse(row.preview) as TakeoutPreview | null,
    filesTotal: Number(row.files_total),
    nextFile: Number(row.next_file),
    nextPart: Number(row.next_part),
    report: JSON.parse(row.report) as ImportReport,
    cancelRequested: Number(row.cancel_requested) === 1,
    leaseOwner: row.lease_owner,
    leaseUntil: optional(row.lease_until),
    error: row.error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    startedAt: optional(row.started_at),
    finishedAt: optional(row.finished_at),
  };
}

/** The import's waiting changes as events, and its end, in the caller's transaction. */
async function endImport(trx: Q, row: Selectable<TakeoutImportTable>, state: FinishedState, error: string | null, now: number, coalesceSeconds: number): Promise<TakeoutImport> {
  const pending = await pendingOf(trx, row.id);
  const events = (Object.entries(pending) as Array<[DataEventType, PendingChange]>)
    .filter(([, change]) => change.dates.length > 0)
    .map(([type, change]) => ({ type, userId: row.user_id, data: { ...(change.ranges ? { ranges: change.ranges } : {}), dates: change.dates }, now }));
  await recordEvents(trx, events, coalesceSeconds);
  await trx.deleteFrom('takeout_import_dates').where('import_id', '=', row.id).execute();
  const ended = { state, error, lease_owner: null, lease_until: null, cancel_requested: state === 'cancelled' ? 1 : Number(row.cancel_requested), finished_at: now, updated_at: now };
  await trx.updateTable('takeout_imports').set(ended).where('id', '=', row.id).execute();
  return importOf({ ...row, ...ended });
}

/** The columns every new import starts with, whatever is known of its archive yet. */
function startingColumns(now: number) {
  return { next_file: 0, next_part: 0, pending_events: '{}', cancel_requested: 0, lease_owner: null, lease_until: null, error: null, created_at: now, updated_at: now, started_at: null, finished_at: null };
}

const ACTIVE: ImportState[] = ['queued', 'running'];
/** Imports waiting for the person: the sweep expires those left too long. */
const UNCONFIRMED: ImportState[] = ['reading', 'previewed'];

export function createTakeoutImportStore(db: Db): TakeoutImportStore {
  const q = db.kysely;
  const selectOf = (k: Q, userId: string, id: string) => k.selectFrom('takeout_imports').selectAll().where('id', '=', id).where('user_id', '=', userId);
  return {
    async create(input) {
      const row = {
        id: newImportId(),
        user_id: input.userId,
        archive_path: input.archivePath,
        archive_name: input.archiveName,
        archive_bytes: input.archiveBytes,
        archive_fingerprint: input.archiveFingerprint,
        owns_archive: input.ownsArchive ? 1 : 0,
        state: 'previewed' as const,
        timezone: input.timezone,
        preview: JSON.stringify(input.preview),
        files_total: input.preview.files_total,
        report: JSON.stringify(emptyReport(input.preview.not_read)),
        ...startingColumns(input.now),
      };
      await q.insertInto('takeout_imports').values(row).execute();
      return importOf(row);
    },

    async createReading(input) {
      const row = {
        id: newImportId(),
        user_id: input.userId,
        archive_path: input.archivePath,
        archive_name: input.archiveName,
        archive_bytes: input.archiveBytes,
        // Known once the archive is read.
        archive_fingerprint: '',
        owns_archive: input.ownsArchive ? 1 : 0,
        state: 'reading' as const,
        timezone: input.timezone,
        preview: 'null',
        files_total: 0,
        report: JSON.stringify(emptyReport({})),
        ...startingColumns(input.now),
      };
      await q.insertInto('takeout_imports').values(row).execute();
      return importOf(row);
    },

    async previewFound(id, owner, found, now) {
      const updated = await q
        .updateTable('takeout_imports')
        .set({
          state: 'previewed',
          archive_bytes: found.archiveBytes,
          archive_fingerprint: found.archiveFingerprint,
          timezone: found.timezone,
          preview: JSON.stringify(found.preview),
          files_total: found.preview.files_total,
          report: JSON.stringify(emptyReport(found.preview.not_read)),
          lease_owner: null,
          lease_until: null,
          updated_at: now,
        })
        .where('id', '=', id)
        .where('state', '=', 'reading')
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) === 1;
    },

    async previewRefused(id, owner, error, now) {
      const updated = await q
        .updateTable('takeout_imports')
        .set({ state: 'failed', error, lease_owner: null, lease_until: null, finished_at: now, updated_at: now })
        .where('id', '=', id)
        .where('state', '=', 'reading')
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) === 1;
    },

    async expireUnconfirmed(before, now, removeArchive) {
      const stale = (k: Q) => k.selectFrom('takeout_imports').selectAll().where('state', 'in', UNCONFIRMED).where('updated_at', '<', before);
      const candidates = await stale(q).orderBy('updated_at').limit(1000).execute();
      const expired: TakeoutImport[] = [];
      for (const candidate of candidates) {
        const ended = await withOwnerLocked(db, { table: 'users', id: candidate.user_id }, async (trx) => {
          // Again under the lock: confirmed, discarded or read meanwhile, it is no longer stale.
          const row = await stale(trx).where('id', '=', candidate.id).executeTakeFirst();
          if (!row) return null;
          const ended = { state: 'expired' as const, lease_owner: null, lease_until: null, finished_at: now, updated_at: now };
          await removeArchive(importOf(row));
          await trx.updateTable('takeout_imports').set(ended).where('id', '=', row.id).execute();
          return importOf({ ...row, ...ended });
        });
        if (ended) expired.push(ended);
      }
      return expired;
    },

    async get(userId, id) {
      if (!isId('takeoutImport', id)) return null;
      const row = await selectOf(q, userId, id).executeTakeFirst();
      return row ? importOf(row) : null;
    },

    async list(userId, limit) {
      const rows = await q.selectFrom('takeout_imports').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
      return rows.map(importOf);
    },

    start: (userId, id, now) =>
      withOwnerLocked(db, { table: 'users', id: userId }, async (trx): Promise<StartOutcome> => {
        if (!isId('takeoutImport', id)) return { notFound: true };
        const row = await selectOf(trx, userId, id).executeTakeFirst();
        if (!row) return { notFound: true };
        if (row.state !== 'previewed') return { notPreviewed: importOf(row) };
        const active = await trx.selectFrom('takeout_imports').selectAll().where('user_id', '=', userId).where('state', 'in', ACTIVE).executeTakeFirst();
        if (active) return { busy: importOf(active) };
        await trx.updateTable('takeout_imports').set({ state: 'queued', updated_at: now }).where('id', '=', id).execute();
        return { started: importOf({ ...row, state: 'queued', updated_at: now }) };
      }),

    cancel: (userId, id, now, coalesceSeconds) =>
      withOwnerLocked(db, { table: 'users', id: userId }, async (trx): Promise<CancelOutcome> => {
        if (!isId('takeoutImport', id)) return { notFound: true };
        const row = await selectOf(trx, userId, id).executeTakeFirst();
        if (!row) return { notFound: true };
        if (row.state === 'done' || row.state === 'cancelled' || row.state === 'failed') return { finished: importOf(row) };
        const leaseLive = row.lease_until !== null && Number(row.lease_until) >= now;
        if (row.state === 'running' && leaseLive) {
          await trx.updateTable('takeout_imports').set({ cancel_requested: 1, updated_at: now }).where('id', '=', id).execute();
          return { cancelling: importOf({ ...row, cancel_requested: 1, updated_at: now }) };
        }
        return { cancelling: await endImport(trx, row, 'cancelled', null, now, coalesceSeconds) };
      }),

    async claim(owner, now, leaseUntil, importId, work = 'import') {
      const skipLocked = db.dialect === 'postgres' ? sql`for update skip locked` : sql``;
      const only = importId === undefined ? sql`` : sql`and id = ${importId}`;
      const states = work === 'import' ? sql`state in ('queued', 'running')` : sql`state = 'reading'`;
      const claimable = sql`${states} and (lease_until is null or lease_until < ${now})`;
      // A read leaves the state as it is (and updated_at: the sweep counts from the upload).
      const taken =
        work === 'import'
          ? sql`state = 'running', lease_owner = ${owner}, lease_until = ${leaseUntil}, updated_at = ${now}, started_at = coalesce(started_at, ${now})`
          : sql`lease_owner = ${owner}, lease_until = ${leaseUntil}`;
      const { rows } = await sql<Selectable<TakeoutImportTable>>`
        update takeout_imports
        set ${taken}
        where id = (select id from takeout_imports where ${claimable} ${only} order by created_at, id limit 1 ${skipLocked})
          and ${claimable}
        returning *`.execute(q);
      return rows[0] ? importOf(rows[0]) : null;
    },

    noteStep: (userId, step) =>
      withOwnerLocked(db, { table: 'users', id: userId }, (trx) => noteImportStep(trx, step, { written: 0, kept: 0, changes: {} })),

    async cancelRequested(id) {
      const row = await q.selectFrom('takeout_imports').select('cancel_requested').where('id', '=', id).executeTakeFirst();
      return row !== undefined && Number(row.cancel_requested) === 1;
    },

    async finish(id, owner, state, error, now, coalesceSeconds) {
      const row = await q.selectFrom('takeout_imports').select('user_id').where('id', '=', id).executeTakeFirst();
      if (!row) return false;
      return withOwnerLocked(db, { table: 'users', id: row.user_id }, async (trx) => {
        const held = await trx.selectFrom('takeout_imports').selectAll().where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
        if (!held || !ACTIVE.includes(held.state)) return false;
        await endImport(trx, held, state, error, now, coalesceSeconds);
        return true;
      });
    },

    async release(id, owner) {
      await q.updateTable('takeout_imports').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
    },
  };
}
