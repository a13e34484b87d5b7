/**
 * An app's feed (docs/webhooks.md, "The feed"): its rows of `events` in order, each told as the
 * events it holds (docs/decisions/0042-compact-events.md) — one per type, in the order of their
 * bits, with `user_id` put back in their data and their ids made from the row's seq
 * (store/event-ids.ts); a row of before migration 022 as it was stored, with its own id.
 */
import { sql, type Kysely } from 'kysely';
import { decodeEventData } from '../db/codec/event-data.js';
import type { Dialect } from '../db/database.js';
import { bitOf, storedUserId, typesOf, userIdOfStored } from '../db/event-rows.js';
import type { Database } from '../db/schema.js';
import { eventIdsOf, WHOLE_ROW, type EventIds, type FeedPosition } from './event-ids.js';

type Q = Kysely<Database>;

export interface FeedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface FeedPage {
  data: FeedEvent[];
  next_cursor: string;
}

interface StoredRow {
  seq: number;
  txid: string;
  types: number;
  user_id: Uint8Array | null;
  data: Uint8Array;
  created_at: number;
}

/** An event of a row, with where it sits: its row's position and its own place in the row. */
interface Told extends FeedEvent {
  seq: number;
  txid: string;
  /** 1 for the row's first event. */
  place: number;
  last: boolean;
  userId: string | null;
}

/** The events of `rows`, in order; the ids of all of them made at once. */
function tell(rows: readonly StoredRow[], ids: EventIds): Told[] {
  const told: Told[] = [];
  const unnamed: Array<[number, number]> = [];
  const naming: Told[] = [];
  for (const row of rows) {
    const seq = Number(row.seq);
    const types = typesOf(Number(row.types));
    const userId = row.user_id === null ? null : userIdOfStored(row.user_id);
    const events = decodeEventData(row.data, types.length, userId);
    const timestamp = new Date(Number(row.created_at) * 1000).toISOString();
    for (const [i, event] of events.entries()) {
      const entry: Told = { id: event.legacyId ?? '', type: types[i]!, timestamp, data: event.data, seq, txid: String(row.txid), place: i + 1, last: i === events.length - 1, userId };
      if (event.legacyId === null) {
        unnamed.push([seq, bitOf(entry.type)]);
        naming.push(entry);
      }
      told.push(entry);
    }
  }
  const named = ids.ids(unnamed);
  for (const [i, entry] of naming.entries()) entry.id = named[i]!;
  return told;
}

/**
 * A page of an app's feed after `cursor` (null: from the start); null for a cursor this feed never
 * gave. On PostgreSQL, rows are ordered by their transaction's id, then their own, and a page
 * stops before any transaction still running could commit (pg_snapshot_xmin), so an event
 * committed late can never fall behind a cursor already handed out. SQLite commits one transaction
 * at a time, in order. A page may end inside a row: its cursor says how many of the row's events
 * were given, and the next page starts with the others.
 */
export async function feedPage(db: Q, dialect: Dialect, appId: string, cursor: string | null, limit: number): Promise<FeedPage | null> {
  const ids = await eventIdsOf(db);
  const after: FeedPosition | null = cursor === null ? { txid: '0', seq: 0, given: WHOLE_ROW } : ids.position(cursor);
  if (after === null) return null;
  // Past the cursor's row when the app read all of it, else from that row.
  const past = after.given === WHOLE_ROW ? sql`>` : sql`>=`;
  const app = sql`(select number from apps where id = ${appId})`;
  const rows =
    dialect === 'sqlite'
      ? (
          await sql<StoredRow>`
            select seq, '0' as txid, types, user_id, data, created_at from events
            where app_number = ${app} and seq ${past} ${after.seq}
            order by seq limit ${limit}`.execute(db)
        ).rows
      : (
          await sql<StoredRow>`
            select seq, txid::text as txid, types, user_id, data, created_at from events
            where app_number = ${app} and (txid, seq) ${past} (${after.txid}::xid8, ${after.seq})
              and txid < pg_snapshot_xmin(pg_current_snapshot())
            order by txid, seq limit ${limit}`.execute(db)
        ).rows;
  const page: Told[] = [];
  for (const event of tell(rows, ids)) {
    if (page.length === limit) break;
    if (event.txid === after.txid && event.seq === after.seq && event.place <= after.given) continue;
    page.push(event);
  }
  const last = page[page.length - 1];
  return {
    data: page.map(({ id, type, timestamp, data }) => ({ id, type, timestamp, data })),
    next_cursor: last ? ids.cursor({ txid: last.txid, seq: last.seq, given: last.last ? WHOLE_ROW : last.place }) : (cursor ?? ids.cursor(after)),
  };
}

/** An event as stored, for tests and benches that look at what was recorded. */
export interface StoredEvent extends FeedEvent {
  seq: number;
  appId: string;
  userId: string | null;
  createdAt: number;
}

/**
 * Every event stored for an app or a person (or both), in the order written, of `type` if given:
 * what the feeds would tell, without the feed's wait for open transactions.
 */
export async function storedEvents(db: Q, filter: { appId?: string; userId?: string; type?: string; afterSeq?: number }): Promise<StoredEvent[]> {
  let query = db
    .selectFrom('events as e')
    .innerJoin('apps as a', 'a.number', 'e.app_number')
    .select(['e.seq', 'e.types', 'e.user_id', 'e.data', 'e.created_at', 'a.id as app_id', sql<string>`'0'`.as('txid')])
    .orderBy('e.seq');
  if (filter.appId !== undefined) query = query.where('a.id', '=', filter.appId);
  if (filter.userId !== undefined) query = query.where('e.user_id', '=', storedUserId(filter.userId));
  if (filter.afterSeq !== undefined) query = query.where('e.seq', '>', filter.afterSeq);
  if (filter.type !== undefined) query = query.where(sql<number>`e.types & ${1 << bitOf(filter.type)}`, '<>', 0);
  const rows = await query.execute();
  const appOf = new Map(rows.map((row) => [Number(row.seq), row.app_id]));
  return tell(rows, await eventIdsOf(db))
    .filter((event) => filter.type === undefined || event.type === filter.type)
    .map(({ id, type, timestamp, data, seq, userId }) => ({ id, type, timestamp, data, seq, appId: appOf.get(seq)!, userId, createdAt: Date.parse(timestamp) / 1000 }));
}
