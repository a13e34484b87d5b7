/**
 * The events a test looks at directly (docs/decisions/0042-compact-events.md): read as the feed
 * tells them, each with the columns a row of `events` had before it was made compact (`type`,
 * `data` as JSON text, `id`, `user_id`, `app_id`), and written as the stores write them, for tests
 * that put events in place without the change that makes them.
 */
import type { Kysely } from 'kysely';
import { encodeEventData, encodeLegacyEvent } from '../../src/db/codec/event-data.js';
import { bitOf, storedUserId } from '../../src/db/event-rows.js';
import type { Database } from '../../src/db/schema.js';
import { eventIdsOf } from '../../src/store/event-ids.js';
import { storedEvents } from '../../src/store/event-feed.js';

export interface EventRow {
  seq: number;
  id: string;
  type: string;
  user_id: string | null;
  app_id: string;
  /** JSON, as the feed tells it (`user_id` first). */
  data: string;
  created_at: number;
}

/** Every event of an app or a person (or both), of `type` if given, in the order written. */
export async function eventRows(db: Kysely<Database>, filter: { appId?: string; userId?: string; type?: string; afterSeq?: number }): Promise<EventRow[]> {
  return (await storedEvents(db, filter)).map((event) => ({
    seq: event.seq,
    id: event.id,
    type: event.type,
    user_id: event.userId,
    app_id: event.appId,
    data: JSON.stringify(event.data),
    created_at: event.createdAt,
  }));
}

export interface NewEventRow {
  app_id: string;
  type: string;
  user_id: string;
  /** The event's data without `user_id` (the feed puts it back). */
  data: Record<string, unknown>;
  created_at: number;
}

/** Inserts one row per event, as recordEvent would for one app; returns their ids, in order. */
export async function insertEventRows(db: Kysely<Database>, rows: readonly NewEventRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const numbers = new Map<string, number>();
  for (const appId of new Set(rows.map((row) => row.app_id))) {
    numbers.set(appId, Number((await db.selectFrom('apps').select('number').where('id', '=', appId).executeTakeFirstOrThrow()).number));
  }
  const inserted = await db
    .insertInto('events')
    .values(rows.map((row) => ({ app_number: numbers.get(row.app_id)!, types: 1 << bitOf(row.type), user_id: storedUserId(row.user_id), data: encodeEventData([row.data]), created_at: row.created_at })))
    .returning('seq')
    .execute();
  const seqs = inserted.map((row) => Number(row.seq)).sort((a, b) => a - b);
  return (await eventIdsOf(db)).ids(seqs.map((seq, i) => [seq, bitOf(rows[i]!.type)]));
}

/** Inserts an event as a row of before migration 022 is kept: its own id, its JSON as stored then. */
export async function insertLegacyEventRow(db: Kysely<Database>, row: { id: string; app_id: string; type: string; user_id: string | null; json: string; created_at: number }): Promise<void> {
  const app = await db.selectFrom('apps').select('number').where('id', '=', row.app_id).executeTakeFirstOrThrow();
  await db
    .insertInto('events')
    .values({ app_number: Number(app.number), types: 1 << bitOf(row.type), user_id: row.user_id === null ? null : storedUserId(row.user_id), data: encodeLegacyEvent(row.id, row.json), created_at: row.created_at })
    .execute();
}
