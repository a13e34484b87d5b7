/**
 * Events (docs/webhooks.md): written in the transaction of the change that causes them — one row
 * per app that may hear of it, and one delivery per endpoint of that app that wants its type — so
 * that a crash loses neither the change nor its event. Read back as each app's feed.
 */
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import type { Dialect } from '../db/database.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, WebhookEndpointFormat } from '../db/schema.js';
import { joinChanges, mergeRanges, type DatedChange, type MinuteRange } from './dated-ranges.js';
import { recordFitbitNotifications } from './fitbit-notifications.js';
import { newEventId, newMessageId } from './message-ids.js';
import { holdsScope, scopeWordPattern } from './scope-words.js';

type Q = Kysely<Database>;

/**
 * The events of a person's data (docs/webhooks.md, "Events"): coalesced per user and endpoint
 * (coalesce below).
 */
export const DATA_EVENT_TYPES = ['steps.updated', 'distance.updated', 'calories.updated', 'heartrate.updated', 'sleep.updated', 'body.updated'] as const;
export type DataEventType = (typeof DATA_EVENT_TYPES)[number];

export const EVENT_TYPES = [...DATA_EVENT_TYPES, 'profile.updated', 'grant.created', 'grant.revoked'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The events an app hears of only while its grant holds the scope that reads their data
 * (docs/webhooks.md, "Who hears what").
 */
export const EVENT_TYPES_READ_WITH: Readonly<Record<string, readonly EventType[]>> = {
  read_profile: ['profile.updated'],
  read_activity: ['steps.updated', 'distance.updated', 'calories.updated'],
  read_heartrate: ['heartrate.updated'],
  read_sleep: ['sleep.updated'],
  read_body: ['body.updated'],
};

/** Every event an app hears of only under a scope: what it may no longer read once its grant ends. */
export const SCOPED_EVENT_TYPES: readonly EventType[] = Object.values(EVENT_TYPES_READ_WITH).flat();

/**
 * For each scoped event, the pattern that finds the grants holding the scope that reads its data
 * (EVENT_TYPES_READ_WITH the other way round; store/scope-words.ts).
 */
const GRANTS_READING = new Map<EventType, string>(
  Object.entries(EVENT_TYPES_READ_WITH).flatMap(([scope, types]) => {
    const pattern = scopeWordPattern(scope);
    return types.map((type) => [type, pattern] as const);
  }),
);

function isDataEvent(type: EventType): type is DataEventType {
  return (DATA_EVENT_TYPES as readonly string[]).includes(type);
}

export interface NewEvent {
  type: EventType;
  userId: string;
  /**
   * The one app that hears of it (the grant events). Without it, every app holding a grant of the
   * user with the scope that reads the event's data (EVENT_TYPES_READ_WITH).
   */
  appId?: string;
  data: Record<string, unknown>;
  now: number;
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

export { mergeRanges, newEventId, newMessageId, type MinuteRange };

/** The Standard Webhooks body: `{type, timestamp, data}`. */
export function messageBody(type: string, createdAt: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: new Date(createdAt * 1000).toISOString(), data });
}

/** Records `event` for its audience, with its deliveries; inside the caller's transaction. */
export async function recordEvent(trx: Q, event: NewEvent, coalesceSeconds: number): Promise<void> {
  const audience = await audienceOf(trx, event);
  if (audience.length === 0) return;
  const data = { user_id: event.userId, ...event.data };
  const eventOfApp = new Map<string, string>();
  for (const { app_id } of audience) if (!eventOfApp.has(app_id)) eventOfApp.set(app_id, newEventId());
  const json = JSON.stringify(data);
  for (const [appId, id] of eventOfApp) await insertEvent(trx, id, appId, event.type, event.userId, json, event.now);
  // Fitbit-compatible subscribers hear in their own format, of the person's collections they subscribed to.
  const subscribers = audience.filter((row) => row.format === 'fitbit').map((row) => ({ appId: row.app_id, endpointId: row.endpoint_id! }));
  if (subscribers.length > 0) await recordFitbitNotifications(trx, { ...event, data }, subscribers, eventOfApp, coalesceSeconds);
  const endpoints = audience.filter((row): row is { app_id: string; endpoint_id: string; event_types: string; format: 'standard' } =>
    row.endpoint_id !== null && row.format === 'standard' && row.event_types!.split(' ').includes(event.type));
  let fresh = endpoints;
  let slots = new Map<string, number>();
  if (isDataEvent(event.type) && coalesceSeconds > 0 && endpoints.length > 0) {
    const coalescing = await coalesce(trx, endpoints.map((endpoint) => endpoint.endpoint_id), event, data, coalesceSeconds);
    fresh = endpoints.filter((endpoint) => !coalescing.joined.has(endpoint.endpoint_id));
    slots = coalescing.slots;
  }
  if (fresh.length === 0) return;
  await trx
    .insertInto('webhook_deliveries')
    .values(fresh.map((endpoint) => ({
      id: newMessageId(),
      endpoint_id: endpoint.endpoint_id,
      event_id: eventOfApp.get(endpoint.app_id)!,
      type: event.type,
      user_id: event.userId,
      payload: messageBody(event.type, event.now, data),
      state: 'pending' as const,
      attempts: 0,
      next_attempt_at: slots.get(endpoint.endpoint_id) ?? event.now,
      created_at: event.now,
    })))
    .execute();
}

/**
 * The apps that hear of `event`, each with its endpoints (null: none), in one read: its one app,
 * or every app holding a grant of the user whose scope has the one that reads the event's data.
 */
async function audienceOf(trx: Q, event: NewEvent): Promise<Array<{ app_id: string; endpoint_id: string | null; event_types: string | null; format: WebhookEndpointFormat | null }>> {
  if (event.appId !== undefined) return (await appAudience(trx, event.appId)).rows;
  const pattern = GRANTS_READING.get(event.type);
  if (pattern === undefined) throw new Error(`${event.type} is heard of by one app: its event names the app`);
  return (await scopeAudience(trx, event.userId, pattern)).rows;
}

// Prepared (db/prepared-query.ts): they run in every upload's transaction.
const insertEvent = preparedQuery((db: Q, id: string, appId: string, type: string, userId: string, data: string, createdAt: number) =>
  db.insertInto('events').values({ id, app_id: appId, type, user_id: userId, data, created_at: createdAt }),
);

const appAudience = preparedQuery((db: Q, appId: string) =>
  db.selectFrom('apps as a').leftJoin('webhook_endpoints as e', 'e.app_id', 'a.id').select(['a.id as app_id', 'e.id as endpoint_id', 'e.event_types', 'e.format']).where('a.id', '=', appId),
);

const scopeAudience = preparedQuery((db: Q, userId: string, scopePattern: string) =>
  db
    .selectFrom('grants as g')
    .leftJoin('webhook_endpoints as e', 'e.app_id', 'g.app_id')
    .select(['g.app_id', 'e.id as endpoint_id', 'e.event_types', 'e.format'])
    .where('g.user_id', '=', userId)
    .where(holdsScope('g.scope', scopePattern)),
);

/** An endpoint's messages of one data event type for a user that are waiting, or made within the window (for the slot). */
const recentDataMessages = preparedQuery((db: Q, endpointId: string, userId: string, type: string, windowStart: number) => {
  const query = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id', 'payload', 'state', 'attempts', 'lease_until', 'created_at'])
    .where('endpoint_id', '=', endpointId)
    .where('user_id', '=', userId)
    .where('type', '=', type)
    .where((eb) =>
      eb.or([eb.and([eb('state', '=', 'pending'), eb('attempts', '=', 0), eb('lease_until', 'is', null)]), eb('created_at', '>', windowStart)]),
    );
  return db.getExecutor().adapter instanceof SqliteAdapter ? query : query.forUpdate();
});

/**
 * A data event (steps.updated, sleep.updated, …) is sent at most once per type, user and endpoint
 * per WEBHOOK_COALESCE seconds: an upload
 * while a message is waiting for its slot (not yet tried, not claimed) joins it — per date, one
 * range covering both (store/dated-ranges.ts) — instead of making another one; otherwise its message
 * waits for the slot after the last one. The rows read are locked (PostgreSQL), so that a worker
 * cannot claim a message between this read and the merge; one a worker holds is left alone, and
 * the upload makes a message of its own.
 */
async function coalesce(trx: Q, endpointIds: string[], event: NewEvent, data: Record<string, unknown>, coalesceSeconds: number) {
  const recent = [];
  for (const id of endpointIds) recent.push(...(await recentDataMessages(trx, id, event.userId, event.type, event.now - coalesceSeconds)).rows);
  const waiting = recent.filter((row) => row.state === 'pending' && row.attempts === 0 && row.lease_until === null);
  // The messages of one user's uploads usually hold the same data: one update per distinct payload.
  const byPayload = new Map<string, Array<{ id: string; endpoint_id: string }>>();
  for (const row of waiting) byPayload.set(row.payload, [...(byPayload.get(row.payload) ?? []), row]);
  const joined = new Set<string>();
  for (const [payload, rows] of byPayload) {
    const before = (JSON.parse(payload) as { data: Partial<DatedChange> }).data;
    // A message that lists no dates (a stride change's range of them) is joined by nothing.
    if (!before.dates) continue;
    for (const row of rows) joined.add(row.endpoint_id);
    // Every data event names the local dates it touches; the series and sleep also a range per date.
    const change = joinChanges(before as DatedChange, data as unknown as DatedChange);
    const merged = { ...data, ...(change.ranges ? { ranges: change.ranges } : {}), dates: change.dates };
    // Minutes sent again (a device syncing the same day) change nothing the message says.
    if (JSON.stringify(merged) === JSON.stringify(before)) continue;
    await trx.updateTable('webhook_deliveries').set({ payload: messageBody(event.type, event.now, merged) }).where('id', 'in', rows.map((row) => row.id)).execute();
  }
  const slots = new Map<string, number>();
  for (const row of recent) slots.set(row.endpoint_id, Math.max(slots.get(row.endpoint_id) ?? event.now, Number(row.created_at) + coalesceSeconds));
  return { joined, slots };
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
