/**
 * Events (docs/webhooks.md): written in the transaction of the change that causes them — one row
 * per app that may hear of it, holding the change's events of one kind
 * (docs/decisions/0042-compact-events.md), and one delivery per endpoint of that app that wants
 * an event's type — so that a crash loses neither the change nor its events. Read back as each
 * app's feed (store/event-feed.ts).
 */
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { encodeEventData } from '../db/codec/event-data.js';
import { bitOf, maskOf, storedUserId, typesOf } from '../db/event-rows.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, WebhookEndpointFormat } from '../db/schema.js';
import { SERIES_METRIC_NAMES, SERIES_METRICS, type SeriesEventType } from '../db/series-metrics.js';
import { joinChanges, mergeRanges, type DatedChange, type MinuteRange } from './dated-ranges.js';
import { eventIdsOf } from './event-ids.js';
import { recordFitbitNotifications } from './fitbit-notifications.js';
import { newEventId, newMessageId } from './message-ids.js';
import { holdsScope, scopeWordPattern } from './scope-words.js';

type Q = Kysely<Database>;

/** The events of the series metrics' writes, in their order of declaration (db/series-metrics.ts). */
const SERIES_EVENT_TYPES: readonly SeriesEventType[] = SERIES_METRIC_NAMES.map((metric) => SERIES_METRICS[metric].event);

/**
 * The events of a person's data (docs/webhooks.md, "Events"): coalesced per user and endpoint
 * (coalesce below).
 */
export const DATA_EVENT_TYPES = [...SERIES_EVENT_TYPES, 'sleep.updated', 'body.updated'] as const;
export type DataEventType = (typeof DATA_EVENT_TYPES)[number];

export const EVENT_TYPES = [...DATA_EVENT_TYPES, 'profile.updated', 'grant.created', 'grant.revoked'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The events of the series metrics read with `scope`. */
function seriesEventsReadWith(scope: string): EventType[] {
  return SERIES_METRIC_NAMES.filter((metric) => SERIES_METRICS[metric].readScope === scope).map((metric) => SERIES_METRICS[metric].event);
}

/**
 * The events an app hears of only while its grant holds the scope that reads their data
 * (docs/webhooks.md, "Who hears what").
 */
export const EVENT_TYPES_READ_WITH: Readonly<Record<string, readonly EventType[]>> = {
  read_profile: ['profile.updated'],
  read_activity: seriesEventsReadWith('read_activity'),
  read_heartrate: seriesEventsReadWith('read_heartrate'),
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

export { mergeRanges, newEventId, newMessageId, type MinuteRange };

/** The Standard Webhooks body: `{type, timestamp, data}`. */
export function messageBody(type: string, createdAt: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: new Date(createdAt * 1000).toISOString(), data });
}

/** Records `event` for its audience, with its deliveries; inside the caller's transaction. */
export function recordEvent(trx: Q, event: NewEvent, coalesceSeconds: number): Promise<void> {
  return recordEvents(trx, [event], coalesceSeconds);
}

/**
 * Records `events`, in this order, for their audiences, with their deliveries; inside the
 * caller's transaction. Events that follow each other about one person at one time, of one kind
 * (read with one scope, so heard of by the same apps) and in the order of their bits are one row
 * per app (docs/decisions/0042-compact-events.md): a steps upload's steps.updated and
 * distance.updated. Apps read them as before, one event each, in this order.
 */
export async function recordEvents(trx: Q, events: readonly NewEvent[], coalesceSeconds: number): Promise<void> {
  for (const row of rowsOf(events)) await recordRow(trx, row, coalesceSeconds);
}

/** The scope each scoped event is read with (EVENT_TYPES_READ_WITH the other way round). */
const SCOPE_OF = new Map<string, string>(Object.entries(EVENT_TYPES_READ_WITH).flatMap(([scope, types]) => types.map((type) => [type, scope] as const)));

function rowsOf(events: readonly NewEvent[]): NewEvent[][] {
  const rows: NewEvent[][] = [];
  for (const event of events) {
    const row = rows[rows.length - 1];
    const last = row?.[row.length - 1];
    const joins =
      last !== undefined && last.appId === undefined && event.appId === undefined && last.userId === event.userId && last.now === event.now &&
      SCOPE_OF.get(last.type) !== undefined && SCOPE_OF.get(last.type) === SCOPE_OF.get(event.type) && bitOf(event.type) > bitOf(last.type);
    if (joins) row!.push(event);
    else rows.push([event]);
  }
  return rows;
}

async function recordRow(trx: Q, row: readonly NewEvent[], coalesceSeconds: number): Promise<void> {
  const first = row[0]!;
  const audience = await audienceOf(trx, first);
  if (audience.length === 0) return;
  const numberOfApp = new Map(audience.map((member) => [member.app_id, Number(member.app_number)]));
  const types = maskOf(row.map((event) => event.type));
  const userId = storedUserId(first.userId);
  const data = encodeEventData(row.map((event) => event.data));
  const seqOfApp = new Map<string, number>();
  for (const [appId, appNumber] of numberOfApp) {
    const inserted = await insertEvent(trx, appNumber, types, userId, data, first.now);
    seqOfApp.set(appId, Number(inserted.rows[0]!.seq));
  }
  // Only messages name their events: a row heard of by no endpoint needs no id.
  if (!audience.some((member) => member.endpoint_id !== null)) return;
  const ids = await eventIdsOf(trx);
  for (const event of row) {
    const bit = bitOf(event.type);
    const apps = [...seqOfApp];
    const named = ids.ids(apps.map(([, seq]) => [seq, bit] as const));
    await recordMessages(trx, audience, event, new Map(apps.map(([appId], i) => [appId, named[i]!])), coalesceSeconds);
  }
}

/** The messages of one event to the endpoints of its audience that want it. */
async function recordMessages(trx: Q, audience: readonly AudienceMember[], event: NewEvent, eventOfApp: ReadonlyMap<string, string>, coalesceSeconds: number): Promise<void> {
  const data = { user_id: event.userId, ...event.data };
  // Fitbit-compatible subscribers hear in their own format, of the person's collections they subscribed to.
  const subscribers = audience.filter((row) => row.format === 'fitbit').map((row) => ({ appId: row.app_id, endpointId: row.endpoint_id! }));
  if (subscribers.length > 0) await recordFitbitNotifications(trx, { ...event, data }, subscribers, eventOfApp, coalesceSeconds);
  const endpoints = audience.filter((row): row is AudienceMember & { endpoint_id: string; event_types: string; format: 'standard' } =>
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

interface AudienceMember {
  app_id: string;
  app_number: number;
  endpoint_id: string | null;
  event_types: string | null;
  format: WebhookEndpointFormat | null;
}

/**
 * The apps that hear of `event`, each with its number and its endpoints (null: none), in one
 * read: its one app, or every app holding a grant of the user whose scope has the one that reads
 * the event's data.
 */
async function audienceOf(trx: Q, event: NewEvent): Promise<AudienceMember[]> {
  if (event.appId !== undefined) return (await appAudience(trx, event.appId)).rows;
  const pattern = GRANTS_READING.get(event.type);
  if (pattern === undefined) throw new Error(`${event.type} is heard of by one app: its event names the app`);
  return (await scopeAudience(trx, event.userId, pattern)).rows;
}

// Prepared (db/prepared-query.ts): they run in every upload's transaction.
const insertEvent = preparedQuery((db: Q, appNumber: number, types: number, userId: Buffer, data: Buffer, createdAt: number) =>
  db.insertInto('events').values({ app_number: appNumber, types, user_id: userId, data, created_at: createdAt }).returning('seq'),
);

const appAudience = preparedQuery((db: Q, appId: string) =>
  db
    .selectFrom('apps as a')
    .leftJoin('webhook_endpoints as e', 'e.app_id', 'a.id')
    .select(['a.id as app_id', 'a.number as app_number', 'e.id as endpoint_id', 'e.event_types', 'e.format'])
    .where('a.id', '=', appId),
);

const scopeAudience = preparedQuery((db: Q, userId: string, scopePattern: string) =>
  db
    .selectFrom('grants as g')
    .innerJoin('apps as a', 'a.id', 'g.app_id')
    .leftJoin('webhook_endpoints as e', 'e.app_id', 'g.app_id')
    .select(['g.app_id', 'a.number as app_number', 'e.id as endpoint_id', 'e.event_types', 'e.format'])
    .where('g.user_id', '=', userId)
    .where(holdsScope('g.scope', scopePattern)),
);

/**
 * Deletes an app's events about a person of any of `types` (its grant no longer reads them). A
 * row holds one kind's types only (rowsOf), so a row goes whole.
 */
export async function deleteEventsAbout(q: Q, appId: string, userId: string, types: readonly string[]): Promise<void> {
  await q
    .deleteFrom('events')
    .where('app_number', '=', (eb) => eb.selectFrom('apps').select('number').where('id', '=', appId))
    .where('user_id', '=', storedUserId(userId))
    .where(sql<number>`types & ${maskOf(types)}`, '<>', 0)
    .execute();
}

/** When the app's events of `types` since `since` were made, one entry per event. */
export async function eventTimes(q: Q, appId: string, types: readonly EventType[], since: number): Promise<Array<{ type: string; created_at: number }>> {
  const rows = await q
    .selectFrom('events')
    .select(['types', 'created_at'])
    .where('app_number', '=', (eb) => eb.selectFrom('apps').select('number').where('id', '=', appId))
    .where(sql<number>`types & ${maskOf(types)}`, '<>', 0)
    .where('created_at', '>=', since)
    .execute();
  return rows.flatMap((row) => typesOf(Number(row.types)).filter((type) => (types as readonly string[]).includes(type)).map((type) => ({ type, created_at: Number(row.created_at) })));
}

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
