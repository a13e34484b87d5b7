/**
 * What a person sees of each of their signed-in sessions on the account page (docs/web.md): the
 * browser it was made in, the address it came from, and when it was last used.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('address', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('last_seen_at', 'bigint').execute();
}
