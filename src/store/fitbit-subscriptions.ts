/**
 * Fitbit-compatible subscriptions (docs/migrating-from-fitbit.md, "Subscriptions"): an app's one
 * subscriber — a webhook endpoint of the `fitbit` format, so that its notifications go through the
 * same outbox, claims and retries as every message (store/webhooks.ts) — and the app's
 * subscriptions to its people's collections. The notifications themselves are written with each
 * change (store/fitbit-notifications.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database, FitbitSubscriptionTable, WebhookEndpointTable } from '../db/schema.js';

type Q = Kysely<Database>;
export type FitbitSubscription = Selectable<FitbitSubscriptionTable>;
/** The subscriber's row: a webhook endpoint (store/webhooks.ts's WebhookEndpoint) of the `fitbit` format. */
type WebhookEndpoint = Selectable<WebhookEndpointTable>;

/** Fitbit's collections that Stride holds (no `foods`). */
export const FITBIT_COLLECTIONS = ['activities', 'body', 'sleep', 'userRevokedAccess'] as const;
export type FitbitCollection = (typeof FITBIT_COLLECTIONS)[number];

/** The collection of a subscription to all of them, as stored. */
export const ALL_COLLECTIONS = '';

export interface SubscriberSettings {
  url: string;
  subscriberId: string;
  verificationCode: string;
  /** The app's client secret, sealed; required for a new subscriber, kept when absent. */
  sealedSecret?: string;
}

export interface NewSubscription {
  appId: string;
  endpointId: string;
  userId: string;
  /** A collection, or ALL_COLLECTIONS. */
  collection: string;
  subscriptionId: string;
}

export interface FitbitSubscriptionStore {
  /** The app's subscriber, if it has one. */
  subscriber(appId: string): Promise<WebhookEndpoint | undefined>;
  /**
   * Sets the app's subscriber, made when it has none. A new URL or verification code starts a
   * verification (nothing is sent until it passes); a new subscriber id alone does not.
   */
  setSubscriber(appId: string, settings: SubscriberSettings, now: number): Promise<WebhookEndpoint>;
  /** Sends the verification again now, to a subscriber still unverified; false when there is none. */
  verifyAgain(appId: string, now: number): Promise<boolean>;
  /** Signs with `sealedSecret` from now on (the client secret changed); false when the app has no subscriber. */
  replaceSecret(appId: string, sealedSecret: string, now: number): Promise<boolean>;
  /** Removes the subscriber, its subscriptions and its waiting notifications; false when there was none. */
  removeSubscriber(appId: string): Promise<boolean>;
  /**
   * `created`; `exists` when the app has this very subscription (same id, person and collection);
   * `conflict` when the id names another of the app's subscriptions, or the person's collection
   * already has one under another id.
   */
  subscribe(subscription: NewSubscription, now: number): Promise<'created' | 'exists' | 'conflict'>;
  /** The app's subscriptions of the person, of `collection` when given, oldest first. */
  list(appId: string, userId: string, collection?: string): Promise<FitbitSubscription[]>;
  /** The app's subscription `subscriptionId` of the person's `collection`; undefined if none. */
  find(appId: string, userId: string, collection: string, subscriptionId: string): Promise<FitbitSubscription | undefined>;
  /** Ends it; false when there was none. */
  unsubscribe(appId: string, userId: string, collection: string, subscriptionId: string): Promise<boolean>;
}

const newSubscriberId = () => `wf_${randomBytes(12).toString('base64url')}`;

export function createFitbitSubscriptionStore(db: Q): FitbitSubscriptionStore {
  const subscriber = (appId: string) => db.selectFrom('webhook_endpoints').selectAll().where('app_id', '=', appId).where('format', '=', 'fitbit').executeTakeFirst();
  const ofSubscription = (appId: string, userId: string, collection: string, subscriptionId: string) =>
    db.selectFrom('fitbit_subscriptions').selectAll().where('app_id', '=', appId).where('user_id', '=', userId).where('collection', '=', collection).where('subscription_id', '=', subscriptionId);
  return {
    subscriber,
    async setSubscriber(appId, settings, now) {
      const current = await subscriber(appId);
      if (!current) {
        if (settings.sealedSecret === undefined) throw new Error('a new subscriber needs the sealed client secret');
        await db
          .insertInto('webhook_endpoints')
          .values({
            id: newSubscriberId(),
            app_id: appId,
            url: settings.url,
            // Fitbit's collections, not Stride's event types: no standard message is meant for it.
            event_types: '',
            state: 'unverified',
            secret: settings.sealedSecret,
            previous_secret: null,
            previous_secret_until: null,
            secret_unshown: 0,
            challenge: settings.verificationCode,
            verify_at: now,
            verify_attempts: 0,
            verify_error: null,
            created_at: now,
            updated_at: now,
            format: 'fitbit',
            fitbit_subscriber_id: settings.subscriberId,
            fitbit_verification_code: settings.verificationCode,
          })
          // Two first settings at once: the second finds the first's row below.
          .onConflict((oc) => oc.doNothing())
          .execute();
        const made = await subscriber(appId);
        if (!made) throw new Error(`the subscriber of app ${appId} was not made`);
        return made;
      }
      const changed = settings.url !== current.url || settings.verificationCode !== current.fitbit_verification_code;
      await db
        .updateTable('webhook_endpoints')
        .set({
          url: settings.url,
          fitbit_subscriber_id: settings.subscriberId,
          fitbit_verification_code: settings.verificationCode,
          ...(settings.sealedSecret !== undefined && { secret: settings.sealedSecret }),
          // Fitbit verifies a subscriber again when its URL changes; so does a new code here.
          ...(changed && { state: 'unverified' as const, challenge: settings.verificationCode, verify_at: now, verify_attempts: 0, verify_error: null }),
          updated_at: now,
        })
        .where('id', '=', current.id)
        .execute();
      return (await subscriber(appId))!;
    },
    async verifyAgain(appId, now) {
      const result = await db
        .updateTable('webhook_endpoints')
        .set((eb) => ({ challenge: eb.ref('fitbit_verification_code'), verify_at: now, verify_attempts: 0, verify_error: null, updated_at: now }))
        .where('app_id', '=', appId)
        .where('format', '=', 'fitbit')
        .where('state', '=', 'unverified')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async replaceSecret(appId, sealedSecret, now) {
      const result = await db.updateTable('webhook_endpoints').set({ secret: sealedSecret, updated_at: now }).where('app_id', '=', appId).where('format', '=', 'fitbit').executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async removeSubscriber(appId) {
      // Its subscriptions and deliveries go with it (foreign keys on delete cascade).
      const result = await db.deleteFrom('webhook_endpoints').where('app_id', '=', appId).where('format', '=', 'fitbit').executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async subscribe(subscription, now) {
      const inserted = await db
        .insertInto('fitbit_subscriptions')
        .values({
          app_id: subscription.appId,
          subscription_id: subscription.subscriptionId,
          endpoint_id: subscription.endpointId,
          user_id: subscription.userId,
          collection: subscription.collection,
          created_at: now,
        })
        // Either uniqueness may be broken: the id taken, or the person's collection subscribed.
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return 'created';
      const same = await ofSubscription(subscription.appId, subscription.userId, subscription.collection, subscription.subscriptionId).executeTakeFirst();
      return same ? 'exists' : 'conflict';
    },
    list(appId, userId, collection) {
      let query = db.selectFrom('fitbit_subscriptions').selectAll().where('app_id', '=', appId).where('user_id', '=', userId);
      if (collection !== undefined) query = query.where('collection', '=', collection);
      return query.orderBy('created_at').orderBy('subscription_id').execute();
    },
    find: (appId, userId, collection, subscriptionId) => ofSubscription(appId, userId, collection, subscriptionId).executeTakeFirst(),
    async unsubscribe(appId, userId, collection, subscriptionId) {
      const result = await db
        .deleteFrom('fitbit_subscriptions')
        .where('app_id', '=', appId)
        .where('user_id', '=', userId)
        .where('collection', '=', collection)
        .where('subscription_id', '=', subscriptionId)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
