/**
 * The server's own secrets, one row each in `server_secrets`. Every process on the database reads
 * the same value, and it survives restarts.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The names of the secrets the server keeps. */
export type ServerSecretName = 'pre_session_csrf' | 'dpop_nonce' | 'sealed_client_secrets' | 'event_ids';

/**
 * The secret `name`, made (32 random bytes) by the first process that asks. Several processes
 * starting at once each offer a value; the insert keeps the first and ignores the others
 * (ON CONFLICT DO NOTHING waits for a concurrent insert of the same key to commit on PostgreSQL),
 * and every process then reads the one that was kept.
 */
export async function readOrCreateServerSecret(db: Kysely<Database>, name: ServerSecretName, now: number): Promise<Buffer> {
  const existing = await readSecret(db, name);
  if (existing) return existing;
  await db
    .insertInto('server_secrets')
    .values({ name, value: randomBytes(32).toString('base64url'), created_at: now })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const kept = await readSecret(db, name);
  if (!kept) throw new Error(`server secret ${name} is missing after it was created`);
  return kept;
}

/**
 * The secret `name`, read from the database when first needed and kept for the life of the
 * process. A read that fails (the database away) is not kept: the next caller tries again.
 */
export function serverSecretOnDemand(db: Kysely<Database>, name: ServerSecretName, clock: () => number): () => Promise<Buffer> {
  let kept: Promise<Buffer> | undefined;
  return () => {
    kept ??= readOrCreateServerSecret(db, name, clock()).catch((error: unknown) => {
      kept = undefined;
      throw error;
    });
    return kept;
  };
}

async function readSecret(db: Kysely<Database>, name: ServerSecretName): Promise<Buffer | undefined> {
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirst();
  return row ? Buffer.from(row.value, 'base64url') : undefined;
}
