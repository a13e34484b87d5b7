/**
 * Fitbit-compatible subscriptions (docs/migrating-from-fitbit.md, "Subscriptions"). An app's
 * subscriber is a webhook endpoint of the `fitbit` format: the same outbox, claims, retries and
 * verification schedule as every endpoint, with Fitbit's verification (`GET ?verify=`), body and
 * signature. Its `secret` is the app's client secret, sealed (src/security/sealed-values.ts), and
 * its challenge, while it is being verified, its verification code. A subscription is the app's, of
 * one person, for one collection ('' for all of them), under an id the app chose.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // `standard` (Standard Webhooks) or `fitbit`.
  await db.schema.alterTable('webhook_endpoints').addColumn('format', 'text', (c) => c.notNull().defaultTo('standard')).execute();
  // The subscriber id that Fitbit's X-Fitbit-Subscriber-Id names; null for a standard endpoint.
  await db.schema.alterTable('webhook_endpoints').addColumn('fitbit_subscriber_id', 'text').execute();
  // The code the subscriber must recognise (`GET ?verify=`), kept after it did, to be shown again.
  await db.schema.alterTable('webhook_endpoints').addColumn('fitbit_verification_code', 'text').execute();
  // One subscriber per app.
  await db.schema.createIndex('webhook_endpoints_fitbit_subscriber').on('webhook_endpoints').column('app_id').unique().where(sql.ref('format'), '=', 'fitbit').execute();

  await db.schema
    .createTable('fitbit_subscriptions')
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    // The app's subscriber: removing it ends its subscriptions.
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // activities, body, sleep or userRevokedAccess; '' for every collection.
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // A subscription id names one subscription of the app, whoever's and of whatever collection.
    .addPrimaryKeyConstraint('fitbit_subscriptions_pkey', ['app_id', 'subscription_id'])
    .execute();
  // One subscription per person, app and collection; also how a change of a person finds them.
  await db.schema.createIndex('fitbit_subscriptions_owner').on('fitbit_subscriptions').columns(['user_id', 'app_id', 'collection']).unique().execute();
  await db.schema.createIndex('fitbit_subscriptions_endpoint').on('fitbit_subscriptions').column('endpoint_id').execute();
}

