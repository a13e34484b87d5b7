/** Browser sessions, kept only as the SHA-256 of the cookie value (docs/SECURITY.md). */
import type { Kysely, Selectable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Db } from '../db/database.js';
import type { Database, SessionTable } from '../db/schema.js';
import type { User } from './users.js';

type Q = Kysely<Database>;
export type SessionRow = Selectable<SessionTable>;

const insertSessionRow = preparedQuery((db: Q, idHash: string, userId: string, csrfSecret: string, createdAt: number, expiresAt: number) =>
  db.insertInto('sessions').values({ id_hash: idHash, user_id: userId, csrf_secret: csrfSecret, created_at: createdAt, expires_at: expiresAt }),
);

async function insertSession(db: Q, session: SessionRow): Promise<void> {
  await insertSessionRow(db, session.id_hash, session.user_id, session.csrf_secret, session.created_at, session.expires_at);
}

export interface LiveSession {
  csrfSecret: string;
  expiresAt: number;
  user: User;
}

const selectLiveSession = preparedQuery((db: Q, idHash: string, now: number) =>
  db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .selectAll('users')
    .select(['sessions.csrf_secret as session_csrf_secret', 'sessions.expires_at as session_expires_at'])
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', now),
);

async function findLiveSession(db: Q, idHash: string, now: number): Promise<LiveSession | undefined> {
  const [row] = (await selectLiveSession(db, idHash, now)).rows;
  if (!row) return undefined;
  const { session_csrf_secret: csrfSecret, session_expires_at: expiresAt, ...user } = row;
  return { csrfSecret, expiresAt, user };
}

async function deleteSession(db: Q, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export interface SessionStore {
  insert(session: SessionRow): Promise<void>;
  /** A live session and its user, in one statement: every signed-in page request reads both. */
  findLive(idHash: string, now: number): Promise<LiveSession | undefined>;
  delete(idHash: string): Promise<void>;
}

export function createSessionStore(db: Db): SessionStore {
  const q = db.kysely;
  return {
    insert: (session) => insertSession(q, session),
    findLive: (idHash, now) => findLiveSession(q, idHash, now),
    delete: (idHash) => deleteSession(q, idHash),
  };
}
