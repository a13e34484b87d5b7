/**
 * Events (docs/webhooks.md): written in the transaction of the change that causes them — one row
 * per app that may hear of it, and one delivery per endpoint of that app that wants its type — so
 * that a crash loses neither the change nor its event. Read back as each app's feed.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db/database.js';
import type { Database } from '../db/schema.js';

type Q = Kysely<Database>;

export const EVENT_TYPES = ['steps.updated', 'profile.updated', 'grant.created', 'grant.revoked'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  type: EventType;
  userId: string;
  /** Who hears of it: every app holding a grant of the user with this scope, or one app. */
  audience: { scope: string } | { appId: string };
  data: Record<string, unknown>;
  now: number;
}

/** A minute range of a steps.updated event, [start_time, end_time) in Unix seconds. */
export interface MinuteRange {
  start_time: number;
  end_time: number;
}

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

export const newEventId = () => `evt_${randomBytes(16).toString('base64url')}`;
export const newMessageId = () => `msg_${randomBytes(16).toString('base64url')}`;

/** The Standard Webhooks body: `{type, timestamp, data}`. */
export function messageBody(type: string, createdAt: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: new Date(createdAt * 1000).toISOString(), data });
}

/** Records `event` for its audience, with its deliveries; inside the caller's transaction. */
export async function recordEvent(trx: Q, event: NewEvent, coalesceSeconds: number): Promise<void> {
  const appIds = 'appId' in event.audience ? [event.audience.appId] : await appsWithScope(trx, event.userId, event.audience.scope);
  if (appIds.length === 0) return;
  const data = { user_id: event.userId, ...event.data };
  const rows = appIds.map((appId) => ({ id: newEventId(), app_id: appId, type: event.type, user_id: event.userId, data: JSON.stringify(data), created_at: event.now }));
  await trx.insertInto('events').values(rows).execute();
  const eventOfApp = new Map(rows.map((row) => [row.app_id, row.id]));
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'app_id', 'event_types'])
    .where('app_id', 'in', appIds)
    .execute();
  for (const endpoint of endpoints) {
    if (!endpoint.event_types.split(' ').includes(event.type)) continue;
    const eventId = eventOfApp.get(endpoint.app_id)!;
    if (event.type === 'steps.updated' && (await coalesced(trx, endpoint.id, eventId, event, data, coalesceSeconds))) continue;
    await trx
      .insertInto('webhook_deliveries')
      .values({
        id: newMessageId(),
        endpoint_id: endpoint.id,
        event_id: eventId,
        type: event.type,
        user_id: event.userId,
        payload: messageBody(event.type, event.now, data),
        state: 'pending',
        attempts: 0,
        next_attempt_at: event.type === 'steps.updated' ? await nextStepsSlot(trx, endpoint.id, event, coalesceSeconds) : event.now,
        created_at: event.now,
      })
      .execute();
  }
}

/** The apps holding a grant of `userId` whose scope has `scope` (scope strings are space-separated names). */
async function appsWithScope(trx: Q, userId: string, scope: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('grants')
    .select('app_id')
    .where('user_id', '=', userId)
    .where(sql<boolean>`(' ' || scope || ' ') like ${`% ${scope.replace(/[\\%_]/g, (c) => `\\${c}`)} %`} escape '\\'`)
    .execute();
  return rows.map((row) => row.app_id);
}

/**
 * steps.updated is sent at most once per user and endpoint per WEBHOOK_COALESCE seconds: an upload
 * while one is waiting for its slot (not yet tried) joins it — ranges and dates merged — instead of
 * making another message. Returns whether it joined one.
 */
async function coalesced(trx: Q, endpointId: string, eventId: string, event: NewEvent, data: Record<string, unknown>, coalesceSeconds: number): Promise<boolean> {
  if (coalesceSeconds === 0) return false;
  const waiting = await trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'payload'])
    .where('endpoint_id', '=', endpointId)
    .where('user_id', '=', event.userId)
    .where('type', '=', 'steps.updated')
    .where('state', '=', 'pending')
    .where('attempts', '=', 0)
    .where('lease_until', 'is', null)
    .executeTakeFirst();
  if (!waiting) return false;
  const before = (JSON.parse(waiting.payload) as { data: { ranges: MinuteRange[]; dates: string[] } }).data;
  const merged = {
    ...data,
    ranges: mergeRanges([...before.ranges, ...(data.ranges as MinuteRange[])]),
    dates: [...new Set([...before.dates, ...(data.dates as string[])])].sort(),
  };
  await trx
    .updateTable('webhook_deliveries')
    .set({ payload: messageBody('steps.updated', event.now, merged), event_id: eventId })
    .where('id', '=', waiting.id)
    .execute();
  return true;
}

/** Now, or WEBHOOK_COALESCE seconds after the last steps.updated message for this user and endpoint. */
async function nextStepsSlot(trx: Q, endpointId: string, event: NewEvent, coalesceSeconds: number): Promise<number> {
  const last = await trx
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('endpoint_id', '=', endpointId)
    .where('user_id', '=', event.userId)
    .where('type', '=', 'steps.updated')
    .executeTakeFirst();
  const at = last?.at == null ? null : Number(last.at);
  return at === null ? event.now : Math.max(event.now, at + coalesceSeconds);
}

/** Sorted, overlapping or touching ranges joined. */
export function mergeRanges(ranges: readonly MinuteRange[]): MinuteRange[] {
  const sorted = [...ranges].sort((a, b) => a.start_time - b.start_time);
  const merged: MinuteRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last && range.start_time <= last.end_time) last.end_time = Math.max(last.end_time, range.end_time);
    else merged.push({ ...range });
  }
  return merged;
}

/**
 * A page of an app's feed after `cursor` (null: from the start). On PostgreSQL, events are
 * ordered by their transaction's id, then their own, and a page stops before any transaction
 * still running could commit (pg_snapshot_xmin), so an event committed late can never fall
 * behind a cursor already handed out. SQLite commits one transaction at a time, in order.
 */
export async function feedPage(db: Q, dialect: Dialect, appId: string, cursor: string | null, limit: number): Promise<FeedPage | null> {
  const after = cursor === null ? { txid: '0', seq: 0 } : decodeCursor(cursor);
  if (after === null) return null;
  const rows =
    dialect === 'sqlite'
      ? await db
          .selectFrom('events')
          .select(['seq', 'id', 'type', 'data', 'created_at', sql<string>`'0'`.as('txid')])
          .where('app_id', '=', appId)
          .where('seq', '>', after.seq)
          .orderBy('seq')
          .limit(limit)
          .execute()
      : (
          await sql<{ seq: number; id: string; type: string; data: string; created_at: number; txid: string }>`
            select seq, id, type, data, created_at, txid::text as txid from events
            where app_id = ${appId} and (txid, seq) > (${after.txid}::xid8, ${after.seq})
              and txid < pg_snapshot_xmin(pg_current_snapshot())
            order by txid, seq limit ${limit}`.execute(db)
        ).rows;
  const last = rows[rows.length - 1];
  return {
    data: rows.map((row) => ({
      id: row.id,
      type: row.type,
      timestamp: new Date(Number(row.created_at) * 1000).toISOString(),
      data: JSON.parse(row.data) as Record<string, unknown>,
    })),
    next_cursor: last ? encodeCursor(String(last.txid), Number(last.seq)) : (cursor ?? encodeCursor('0', 0)),
  };
}

function encodeCursor(txid: string, seq: number): string {
  return Buffer.from(`${txid}.${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): { txid: string; seq: number } | null {
  const match = /^(\d{1,20})\.(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? { txid: match[1]!, seq: Number(match[2]) } : null;
}

/** Deletes events older than `before` (EVENT_RETENTION) and finished deliveries as old. */
export async function deleteOldEvents(db: Q, before: number): Promise<number> {
  const events = await db.deleteFrom('events').where('created_at', '<', before).executeTakeFirst();
  await db.deleteFrom('webhook_deliveries').where('state', '!=', 'pending').where('created_at', '<', before).execute();
  return Number(events.numDeletedRows);
}
