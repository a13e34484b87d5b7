/** Browser sessions, kept only as the SHA-256 of the cookie value (SPEC §6). */
import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionTable } from '../db/schema.js';

type Q = Kysely<Database>;
export type SessionRow = Selectable<SessionTable>;

export async function insertSession(db: Q, session: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

export function findLiveSession(db: Q, idHash: string, now: number): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function deleteSession(db: Q, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}
