/**
 * Three things people looked for and did not find (docs/operations.md, docs/webhooks.md, docs/web.md):
 * - `password_resets`: single-use links to set a new password (`stride users reset-link`, or
 *   "Forgot your password?" with SMTP_URL), kept by the SHA-256 of their token like every credential.
 * - `ended_access_tokens`: which app an access token that was deleted (revoked, or swept once
 *   expired) had been issued to, so a request still carrying it counts in that app's usage. Filled
 *   by a trigger, since tokens go by many paths, cascades from their grant included; not a foreign
 *   key, so a deleted app's rows never block its deletion (usage skips apps that are gone).
 * - `webhook_deliveries.last_response_body`: the first 1 KB of the receiver's last answer.
 */
import { sql, SqliteAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;

  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Set when used: a second use is told the link was used, not that it is unknown.
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('password_resets_user').on('password_resets').column('user_id').execute();

  await db.schema
    .createTable('ended_access_tokens')
    .addColumn('token_key', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull())
    // The token's own expiry, copied: the sweeper forgets the row a while after it (a trigger has
    // the database's clock, not the server's, so it writes no time of its own).
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ended_access_tokens_expires_at').on('ended_access_tokens').column('expires_at').execute();
  if (sqlite) {
    await sql`
      create trigger access_tokens_ended after delete on access_tokens begin
        insert into ended_access_tokens (token_key, app_id, expires_at) values (old.token_key, old.app_id, old.expires_at)
          on conflict do nothing;
      end`.execute(db);
  } else {
    await sql`
      create function access_tokens_ended() returns trigger language plpgsql as $$
      begin
        insert into ended_access_tokens (token_key, app_id, expires_at)
          values (old.token_key, old.app_id, old.expires_at) on conflict do nothing;
        return null;
      end $$`.execute(db);
    await sql`create trigger access_tokens_ended after delete on access_tokens for each row execute function access_tokens_ended()`.execute(db);
  }

  await db.schema.alterTable('webhook_deliveries').addColumn('last_response_body', 'text').execute();
}
