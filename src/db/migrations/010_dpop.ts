/**
 * DPoP (RFC 9449, docs/decisions/0019-dpop.md): the JWK thumbprint a token is bound to, an app's
 * "require DPoP" setting, and the proof identifiers seen within the proof window, whose unique key
 * refuses a replayed proof on every process sharing the database.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // RFC 7638 thumbprint (base64url SHA-256) of the key the token is bound to; null for bearer tokens.
  await db.schema.alterTable('access_tokens').addColumn('jkt', 'text').execute();
  await db.schema.alterTable('refresh_tokens').addColumn('jkt', 'text').execute();
  await db.schema.alterTable('apps').addColumn('require_dpop', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema
    .createTable('dpop_proofs')
    // SHA-256 of the key's thumbprint and the proof's jti: a jti is unique per key (RFC 9449 §11.1).
    .addColumn('proof_key', 'text', (c) => c.primaryKey())
    // When the proof leaves the iat window; the sweeper deletes it after.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dpop_proofs_expires').on('dpop_proofs').column('expires_at').execute();
}
