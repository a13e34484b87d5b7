/** Browser sessions, kept only as the SHA-256 of the cookie value (SPEC §6). */
import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionTable } from '../db/schema.js';
import type { User } from './users.js';

type Q = Kysely<Database>;
export type SessionRow = Selectable<SessionTable>;

export async function insertSession(db: Q, session: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

export interface LiveSession {
  csrfSecret: string;
  expiresAt: number;
  user: User;
}

/** A live session and its user, in one statement: every signed-in page request reads both. */
export async function findLiveSession(db: Q, idHash: string, now: number): Promise<LiveSession | undefined> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .selectAll('users')
    .select(['sessions.csrf_secret as session_csrf_secret', 'sessions.expires_at as session_expires_at'])
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  const { session_csrf_secret: csrfSecret, session_expires_at: expiresAt, ...user } = row;
  return { csrfSecret, expiresAt, user };
}

export async function deleteSession(db: Q, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}
