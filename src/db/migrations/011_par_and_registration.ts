/**
 * Pushed authorization requests (RFC 9126; docs/decisions/0020-pushed-authorization-requests.md)
 * and dynamic client registration (RFC 7591/7592; docs/decisions/0021-dynamic-client-registration.md):
 * the per-app "require PAR" setting, the pushed requests, the registration access token and
 * registered metadata of a registered app, and the operator's initial access tokens.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('apps').addColumn('require_par', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // SHA-256 of the RFC 7592 registration access token; null for apps made on the dashboard or CLI.
  await db.schema.alterTable('apps').addColumn('registration_token_hash', 'text').execute();
  // JSON of the RFC 7591 metadata kept only to be read back (token_endpoint_auth_method, …).
  await db.schema.alterTable('apps').addColumn('registration_metadata', 'text').execute();
  await db.schema
    .createTable('pushed_authorization_requests')
    // SHA-256 of the random part of the request_uri.
    .addColumn('request_uri_hash', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    // JSON object of the authorization request's parameters.
    .addColumn('parameters', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pushed_authorization_requests_app').on('pushed_authorization_requests').column('app_id').execute();
  await db.schema
    .createTable('registration_tokens')
    // SHA-256 of the initial access token (RFC 7591 §3).
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
