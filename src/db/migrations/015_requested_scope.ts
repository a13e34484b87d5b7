/**
 * Fitbit clients (docs/oauth.md, "Fitbit clients"): the scope of an authorization or device request
 * as the app worded it, when it used Fitbit's scope words, carried from the code (or device request)
 * to the refresh tokens of its grant, so that every token response names the words the app asked
 * with.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The request's scope parts, each once, in the order sent; null when it named Stride's scopes alone.
  await db.schema.alterTable('authorization_codes').addColumn('requested_scope', 'text').execute();
  await db.schema.alterTable('device_codes').addColumn('requested_scope', 'text').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('requested_scope', 'text').execute();
}
