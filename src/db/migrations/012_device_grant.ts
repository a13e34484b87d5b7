/**
 * The device authorization grant (RFC 8628, docs/oauth.md "Device authorization"): the requests a
 * device started, and per app the grant types it may use.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Space-separated; every app made before this could use the code flow and refresh.
  await db.schema
    .alterTable('apps')
    .addColumn('grant_types', 'text', (c) => c.notNull().defaultTo('authorization_code refresh_token'))
    .execute();
  await db.schema
    .createTable('device_codes')
    // SHA-256 of the device code: the one indexed read of every poll.
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    // SHA-256 of the normalised user code (8 letters, no hyphen, upper case).
    .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    // The scopes the device asked for; once approved, those the person granted.
    .addColumn('scope', 'text', (c) => c.notNull())
    // pending, approved, denied, used.
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('grant_id', 'text')
    // Seconds between polls; raised by 5 at each slow_down (RFC 8628 §3.5).
    .addColumn('poll_interval', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_codes_expiry').on('device_codes').column('expires_at').execute();
}
