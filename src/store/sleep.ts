/**
 * Sleep sessions (docs/api.md, "Sleep"): one row per session, keyed by the person and its start,
 * its stages packed (db/codec/sleep-stages.ts). A person's sessions never overlap: a save reads the
 * sessions near the new one and writes it, or refuses it, in one transaction that first takes the
 * person's lock (store/owner-lock.ts), so two overlapping sessions sent at the same moment cannot
 * both be stored. Every change records its sleep.updated event in the same transaction.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import { preparedRead } from '../db/prepared-reads.js';
import type { Database } from '../db/schema.js';
import { packStages, unpackStages, type SleepStage, type SleepStageName } from '../db/codec/sleep-stages.js';
import { overlapsStored } from '../domain/sleep-overlap.js';
import { rangesByDate } from './dated-ranges.js';
import { recordEvent } from './events.js';
import { withOwnerLocked } from './owner-lock.js';
import { formatRecordId, newIdTag, parseRecordId } from './record-ids.js';
import { noteImportStep, type ImportStep, type StepOutcome } from './takeout-imports.js';

export { SLEEP_STAGE_CODES } from '../db/codec/sleep-stages.js';
export type { SleepStage, SleepStageName };

/**
 * The longest session (docs/api.md, "Sleep — POST /v1/users/me/sleep/"); the store relies on it to
 * find overlaps by a range of starts.
 */
export const MAX_SLEEP_SESSION_SECONDS = 86_400;

/** A session as sent: its stages contiguous, covering [start_time, end_time) exactly. */
export interface SleepSessionInput {
  start_time: number;
  end_time: number;
  stages: SleepStage[];
}

export interface StoredSleepSession extends SleepSessionInput {
  id: string;
}

/** What a change needs for its event (docs/webhooks.md): the clock, coalescing and local dates. */
export interface DataChange {
  now: number;
  /** WEBHOOK_COALESCE (docs/webhooks.md). */
  coalesceSeconds: number;
  /** The local date (YYYY-MM-DD) of an instant, in the person's zone. */
  dateOf(time: number): string;
}

export type SleepSaveOutcome = { saved: StoredSleepSession } | { overlaps: StoredSleepSession };

export interface SleepStore {
  /**
   * Stores `session`, replacing the one with the same start (which keeps its id), unless it
   * overlaps another: then nothing is written and that one is returned.
   */
  save(userId: string, session: SleepSessionInput, change: DataChange): Promise<SleepSaveOutcome>;
  /**
   * An import's sessions (store/takeout-imports.ts), in order, in one transaction: each is stored
   * unless the person holds a session with its start (kept as stored) or one it overlaps (refused,
   * as the API refuses it); then `step` is noted with the stored ones' change (their dates by
   * `dateOf`). Records no event of its own.
   */
  addNew(userId: string, sessions: readonly SleepSessionInput[], step: ImportStep, dateOf: (time: number) => string): Promise<StepOutcome>;
  /** The sessions whose end_time is in [from, to), by start. */
  endingWithin(userId: string, from: number, to: number): Promise<StoredSleepSession[]>;
  /** Deletes the session `id` names; the deleted session, or null when the person has none by that id. */
  remove(userId: string, id: string, change: DataChange): Promise<StoredSleepSession | null>;
  /** The sessions starting after `afterStart` (exclusive), by start, at most `limit`: one page of an export. */
  sessionsAfter(userId: string, afterStart: number, limit: number): Promise<StoredSleepSession[]>;
}

interface SessionRow {
  start_time: number | string;
  end_time: number | string;
  id_tag: number;
  stages: Uint8Array;
}

const COLUMNS = ['start_time', 'end_time', 'id_tag', 'stages'] as const;

function sessionOf(row: SessionRow): StoredSleepSession {
  const start = Number(row.start_time);
  return {
    id: formatRecordId('slp', { time: start, tag: row.id_tag }),
    start_time: start,
    end_time: Number(row.end_time),
    stages: unpackStages(start, row.stages),
  };
}

/**
 * What a change of sessions tells (store/dated-ranges.ts): the dates they end on, in the person's
 * zone, and per date one range from the start of its first session changed to the end of its last.
 */
function sessionsChange(sessions: readonly SleepSessionInput[], dateOf: (time: number) => string) {
  return rangesByDate(sessions.map(({ start_time, end_time }) => ({ date: dateOf(end_time), start_time, end_time })));
}

async function recordSleepEvent(trx: Kysely<Database>, userId: string, sessions: readonly SleepSessionInput[], change: DataChange): Promise<void> {
  const { dates, ranges } = sessionsChange(sessions, change.dateOf);
  await recordEvent(trx, { type: 'sleep.updated', userId, data: { dates, ranges }, now: change.now }, change.coalesceSeconds);
}

/**
 * The person's sessions that may overlap `session`, by start, under the person's lock: those a
 * save replaces (the same start) or is refused for (domain/sleep-overlap.ts). A session lasts at
 * most a day, so only starts in the day before it can reach into it.
 */
function sessionsNear(trx: Kysely<Database>, userId: string, session: SleepSessionInput) {
  return trx
    .selectFrom('sleep_sessions')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .where('start_time', '>', session.start_time - MAX_SLEEP_SESSION_SECONDS)
    .where('start_time', '<', session.end_time)
    .orderBy('start_time')
    .execute();
}

/** The first of `near` that `session` may not be stored beside. */
const firstOverlapped = (session: SleepSessionInput, near: readonly SessionRow[]) =>
  near.find((row) => overlapsStored(session, { start_time: Number(row.start_time), end_time: Number(row.end_time) }));

export function createSleepStore(db: Db): SleepStore {
  const q = db.kysely;
  // Read by the sleep list (GET /v1/users/me/sleep/): compiled once, in the turn's reads.
  const sessionsEnding = preparedRead<[string, number, number, number, number], SessionRow>(db, (k, userId, earliestStart, to, from, before) =>
    k
      .selectFrom('sleep_sessions')
      .select(COLUMNS)
      .where('user_id', '=', userId)
      .where('start_time', '>=', earliestStart)
      .where('start_time', '<', to)
      .where('end_time', '>=', from)
      .where('end_time', '<', before)
      .orderBy('start_time'),
  );
  return {
    save: (userId, session, change) =>
      withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const near = await sessionsNear(trx, userId, session);
        const replaced = near.find((row) => Number(row.start_time) === session.start_time);
        const other = firstOverlapped(session, near);
        if (other) return { overlaps: sessionOf(other) };
        const idTag = replaced?.id_tag ?? newIdTag();
        const row = { user_id: userId, start_time: session.start_time, end_time: session.end_time, id_tag: idTag, stages: packStages(session.stages) };
        await trx
          .insertInto('sleep_sessions')
          .values(row)
          .onConflict((oc) => oc.columns(['user_id', 'start_time']).doUpdateSet({ end_time: row.end_time, stages: row.stages }))
          .execute();
        const saved = sessionOf(row);
        await recordSleepEvent(trx, userId, replaced ? [sessionOf(replaced), saved] : [saved], change);
        return { saved };
      }),

    addNew: (userId, sessions, step, dateOf) =>
      withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const outcome: StepOutcome = { written: 0, kept: 0, refused: [], changes: {} };
        const stored: SleepSessionInput[] = [];
        for (let index = 0; index < sessions.length; index++) {
          const session = sessions[index]!;
          const near = await sessionsNear(trx, userId, session);
          if (near.some((row) => Number(row.start_time) === session.start_time)) {
            outcome.kept++;
            continue;
          }
          const overlapped = firstOverlapped(session, near);
          if (overlapped) {
            const other = sessionOf(overlapped);
            outcome.refused!.push({ index, code: 'sleep_overlap', reason: `the session from ${session.start_time} to ${session.end_time} overlaps the stored session ${other.id} (start_time ${other.start_time}, end_time ${other.end_time}); the stored one is kept` });
            continue;
          }
          const row = { user_id: userId, start_time: session.start_time, end_time: session.end_time, id_tag: newIdTag(), stages: packStages(session.stages) };
          await trx.insertInto('sleep_sessions').values(row).execute();
          stored.push(session);
        }
        outcome.written = stored.length;
        if (stored.length > 0) {
          outcome.changes['sleep.updated'] = sessionsChange(stored, dateOf);
        }
        await noteImportStep(trx, step, outcome);
        return outcome;
      }),

    async endingWithin(userId, from, to) {
      // Each argument is bound once (db/prepared-query.ts), so `to` is passed twice.
      const rows = await sessionsEnding(userId, from - MAX_SLEEP_SESSION_SECONDS, to, from, to);
      return rows.map(sessionOf);
    },

    async remove(userId, id, change) {
      const key = parseRecordId('slp', id);
      if (key === null) return null;
      return withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const row = await trx
          .deleteFrom('sleep_sessions')
          .where('user_id', '=', userId)
          .where('start_time', '=', key.time)
          .where('id_tag', '=', key.tag)
          .returning(COLUMNS)
          .executeTakeFirst();
        if (!row) return null;
        const removed = sessionOf(row);
        await recordSleepEvent(trx, userId, [removed], change);
        return removed;
      });
    },

    async sessionsAfter(userId, afterStart, limit) {
      const rows = await q
        .selectFrom('sleep_sessions')
        .select(COLUMNS)
        .where('user_id', '=', userId)
        .where('start_time', '>', afterStart)
        .orderBy('start_time')
        .limit(limit)
        .execute();
      return rows.map(sessionOf);
    },
  };
}
