/**
 * The notifications of Fitbit-compatible subscribers (docs/migrating-from-fitbit.md,
 * "Subscriptions"), written with the event that causes them, in its transaction (store/events.ts):
 * for each app of the event's audience that has a subscriber and a subscription of the person's
 * collection, a message whose body is Fitbit's array of
 * `{collectionType, date, ownerId, ownerType, subscriptionId}`. They are coalesced per subscriber,
 * person and collection: a change while a message waits joins it (its dates added), so that a
 * date is told once per WEBHOOK_COALESCE window.
 */
import { SqliteAdapter, type Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Database } from '../db/schema.js';
import { SERIES_METRIC_NAMES, SERIES_METRICS } from '../db/series-metrics.js';
import { ALL_COLLECTIONS, type FitbitCollection } from './fitbit-subscriptions.js';
import { newMessageId } from './message-ids.js';

type Q = Kysely<Database>;

/**
 * Fitbit's collection of each event a subscriber hears of: every series metric's (db/series-metrics.ts)
 * is in `activities`, heart rate's too, as on Fitbit.
 */
const COLLECTION_OF: Readonly<Record<string, FitbitCollection>> = {
  ...Object.fromEntries(SERIES_METRIC_NAMES.map((metric) => [SERIES_METRICS[metric].event, 'activities' as const])),
  'body.updated': 'body',
  'sleep.updated': 'sleep',
  'grant.revoked': 'userRevokedAccess',
};

/** The type of a subscriber's messages about one collection (the delivery log shows it). */
const messageType = (collection: FitbitCollection) => `fitbit.${collection}`;

/**
 * The types of the subscribers' messages about the data of `eventTypes`: they go with the events'
 * own when the app may no longer read that data (store/grants.ts). `activities` tells of steps and
 * heart rate alike, so a waiting one goes when either may no longer be read.
 */
export function fitbitMessageTypesAbout(eventTypes: readonly string[]): string[] {
  const collections = new Set(eventTypes.map((type) => COLLECTION_OF[type]).filter((collection) => collection !== undefined && collection !== 'userRevokedAccess'));
  return [...collections].map((collection) => messageType(collection!));
}

/** One entry of a notification, in Fitbit's shape and key order. */
interface Entry {
  collectionType: FitbitCollection;
  date: string;
  ownerId: string;
  ownerType: 'user';
  subscriptionId: string;
}

export interface SubscriberOfApp {
  appId: string;
  endpointId: string;
}

export interface NotifiedChange {
  type: string;
  userId: string;
  data: Record<string, unknown>;
  now: number;
}

/**
 * Writes the notifications of `change` to `subscribers` (the subscribers of the apps that hear of
 * it), inside the caller's transaction. `eventIdOfApp`: the event each app's feed got.
 */
export async function recordFitbitNotifications(trx: Q, change: NotifiedChange, subscribers: readonly SubscriberOfApp[], eventIdOfApp: ReadonlyMap<string, string>, coalesceSeconds: number): Promise<void> {
  const collection = COLLECTION_OF[change.type];
  if (collection === undefined || subscribers.length === 0) return;
  // A change names its local dates; a stride change names a range of them instead, and is not told
  // date by date (it may span years).
  const changed = change.data.dates as string[] | undefined;
  if (collection !== 'userRevokedAccess' && (changed === undefined || changed.length === 0)) return;
  const subscriptions = await trx
    .selectFrom('fitbit_subscriptions')
    .select(['endpoint_id', 'subscription_id'])
    .where('user_id', '=', change.userId)
    .where('endpoint_id', 'in', subscribers.map((subscriber) => subscriber.endpointId))
    .where('collection', 'in', [ALL_COLLECTIONS, collection])
    .execute();
  if (subscriptions.length === 0) return;
  const dates = collection === 'userRevokedAccess' ? [await localDate(trx, change.userId, change.now)] : changed!;
  for (const subscriber of subscribers) {
    const ids = subscriptions.filter((row) => row.endpoint_id === subscriber.endpointId).map((row) => row.subscription_id);
    if (ids.length === 0) continue;
    const entries = dates.flatMap((date) => ids.map((subscriptionId): Entry => ({ collectionType: collection, date, ownerId: change.userId, ownerType: 'user', subscriptionId })));
    await notify(trx, subscriber, change, collection, entries, eventIdOfApp.get(subscriber.appId)!, coalesceSeconds);
  }
}

/** A subscriber's messages of one collection for a person that wait, or were made within the window (for the slot). */
function recentMessages(trx: Q, endpointId: string, userId: string, type: string, windowStart: number) {
  const query = trx
    .selectFrom('webhook_deliveries')
    .select(['id', 'payload', 'state', 'attempts', 'lease_until', 'created_at'])
    .where('endpoint_id', '=', endpointId)
    .where('user_id', '=', userId)
    .where('type', '=', type)
    .where((eb) => eb.or([eb.and([eb('state', '=', 'pending'), eb('attempts', '=', 0), eb('lease_until', 'is', null)]), eb('created_at', '>', windowStart)]));
  // Locked, so that a worker cannot claim a message between this read and the merge (store/events.ts).
  return trx.getExecutor().adapter instanceof SqliteAdapter ? query.execute() : query.forUpdate().execute();
}

async function notify(trx: Q, subscriber: SubscriberOfApp, change: NotifiedChange, collection: FitbitCollection, entries: Entry[], eventId: string, coalesceSeconds: number): Promise<void> {
  const type = messageType(collection);
  const recent = await recentMessages(trx, subscriber.endpointId, change.userId, type, change.now - coalesceSeconds);
  // A message not yet tried nor claimed takes the new dates: one notification per date and window.
  const waiting = recent.find((row) => row.state === 'pending' && row.attempts === 0 && row.lease_until === null);
  if (waiting) {
    const merged = joined(JSON.parse(waiting.payload) as Entry[], entries);
    if (merged !== waiting.payload) await trx.updateTable('webhook_deliveries').set({ payload: merged }).where('id', '=', waiting.id).execute();
    return;
  }
  const slot = Math.max(change.now, ...recent.map((row) => Number(row.created_at) + coalesceSeconds));
  await trx
    .insertInto('webhook_deliveries')
    .values({
      id: newMessageId(),
      endpoint_id: subscriber.endpointId,
      event_id: eventId,
      type,
      user_id: change.userId,
      payload: joined([], entries),
      state: 'pending',
      attempts: 0,
      next_attempt_at: slot,
      created_at: change.now,
    })
    .execute();
}

/** The body of both lists' entries, each once, by date then subscription id. */
function joined(before: readonly Entry[], added: readonly Entry[]): string {
  const byKey = new Map<string, Entry>();
  for (const entry of [...before, ...added]) byKey.set(`${entry.date} ${entry.subscriptionId}`, entry);
  const sorted = [...byKey.values()].sort((a, b) => (a.date === b.date ? (a.subscriptionId < b.subscriptionId ? -1 : 1) : a.date < b.date ? -1 : 1));
  return JSON.stringify(sorted);
}

/** The person's local date at `now`, in their time zone (UTC when it is not one luxon knows). */
async function localDate(trx: Q, userId: string, now: number): Promise<string> {
  const row = await trx.selectFrom('users').select('timezone').where('id', '=', userId).executeTakeFirst();
  const local = DateTime.fromSeconds(now, { zone: row?.timezone ?? 'UTC' });
  return (local.isValid ? local : DateTime.fromSeconds(now, { zone: 'UTC' })).toISODate()!;
}
