/** Browser sessions, kept only as the SHA-256 of the cookie value (docs/SECURITY.md). */
import type { Kysely, Selectable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import { preparedRead } from '../db/prepared-reads.js';
import type { Db } from '../db/database.js';
import type { Database, SessionTable } from '../db/schema.js';
import { isId } from './identifiers.js';
import type { User } from './users.js';

type Q = Kysely<Database>;
export type SessionRow = Selectable<SessionTable>;

const insertSessionRow = preparedQuery(
  (db: Q, idHash: string, userId: string, csrfSecret: string, createdAt: number, expiresAt: number, userAgent: string | null, address: string | null, lastSeenAt: number) =>
    db.insertInto('sessions').values({
      id_hash: idHash,
      user_id: userId,
      csrf_secret: csrfSecret,
      created_at: createdAt,
      expires_at: expiresAt,
      user_agent: userAgent,
      address,
      last_seen_at: lastSeenAt,
    }),
);

/**
 * A session is seen when it starts: the page the sign-in redirects to finds it seen just now and
 * writes nothing (LAST_SEEN_PRECISION_SECONDS), and it sorts by its start among the sessions used since.
 */
async function insertSession(db: Q, session: NewSession): Promise<void> {
  const { id_hash, user_id, csrf_secret, created_at, expires_at } = session;
  await insertSessionRow(db, id_hash, user_id, csrf_secret, created_at, expires_at, session.user_agent ?? null, session.address ?? null, created_at);
}

export type NewSession = Omit<SessionRow, 'last_seen_at' | 'user_agent' | 'address'> & { user_agent?: string | null; address?: string | null };

export interface LiveSession {
  csrfSecret: string;
  expiresAt: number;
  lastSeenAt: number | null;
  user: User;
}

/** One of a person's signed-in sessions, as the account page lists them. */
export interface SessionSummary {
  idHash: string;
  userAgent: string | null;
  address: string | null;
  createdAt: number;
  lastSeenAt: number;
}

/** How stale last_seen_at may get: one write a minute per session at most, not one per page. */
export const LAST_SEEN_PRECISION_SECONDS = 60;

/**
 * How long a session's row, and the browser's cookie, outlive the session: a day in which a form
 * sent from one of its pages is still known to be that person's, and kept as their draft
 * (docs/web.md, "A form sent after the session ended"). The row signs nobody in meanwhile.
 */
export const ENDED_SESSION_KEPT_SECONDS = 86400;

/** A session that has ended but is still known: whose it was, and the secret its forms' CSRF tokens came from. */
export interface EndedSession {
  userId: string;
  csrfSecret: string;
}

type LiveSessionRow = User & { session_csrf_secret: string; session_expires_at: number; session_last_seen_at: number | null };

/** Every signed-in page reads its session: with the other reads of the turn (db/prepared-reads.ts). */
function liveSessionLookup(db: Db): (idHash: string, now: number) => Promise<LiveSession | undefined> {
  const select = preparedRead<[string, number], LiveSessionRow>(db, (k, idHash, now) =>
    k
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('users')
      .select(['sessions.csrf_secret as session_csrf_secret', 'sessions.expires_at as session_expires_at', 'sessions.last_seen_at as session_last_seen_at'])
      .where('sessions.id_hash', '=', idHash)
      .where('sessions.expires_at', '>', now),
  );
  return async (idHash, now) => {
    const [row] = await select(idHash, now);
    if (!row) return undefined;
    const { session_csrf_secret: csrfSecret, session_expires_at: expiresAt, session_last_seen_at: lastSeen, ...user } = row;
    return { csrfSecret, expiresAt, lastSeenAt: lastSeen === null ? null : Number(lastSeen), user };
  };
}

const touchSession = preparedQuery((db: Q, now: number, idHash: string) =>
  db.updateTable('sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash),
);

async function findEndedSession(db: Q, idHash: string, now: number): Promise<EndedSession | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select(['user_id', 'csrf_secret'])
    .where('id_hash', '=', idHash)
    .where('expires_at', '<=', now)
    .where('expires_at', '>', now - ENDED_SESSION_KEPT_SECONDS)
    .executeTakeFirst();
  return row && { userId: row.user_id, csrfSecret: row.csrf_secret };
}

async function deleteSession(db: Q, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export interface SessionStore {
  insert(session: NewSession): Promise<void>;
  /** A live session and its user, in one statement: every signed-in page request reads both. */
  findLive(idHash: string, now: number): Promise<LiveSession | undefined>;
  /** A session expired at most ENDED_SESSION_KEPT_SECONDS before `now`; a deleted one is not known. */
  findEnded(idHash: string, now: number): Promise<EndedSession | undefined>;
  /** Records that the session was used at `now`. */
  touch(idHash: string, now: number): Promise<void>;
  delete(idHash: string): Promise<void>;
  /** The user's live sessions, the most recently used first. */
  listLive(userId: string, now: number): Promise<SessionSummary[]>;
  /** Ends the user's session `idHash` — only theirs; false when they have no such session. */
  endOwn(userId: string, idHash: string): Promise<boolean>;
  /** Ends every session of the user but `keep`; returns how many. */
  endAllBut(userId: string, keep: string): Promise<number>;
}

export function createSessionStore(db: Db): SessionStore {
  const q = db.kysely;
  return {
    insert: (session) => insertSession(q, session),
    findLive: liveSessionLookup(db),
    findEnded: (idHash, now) => findEndedSession(q, idHash, now),
    async touch(idHash, now) {
      await touchSession(q, now, idHash);
    },
    delete: (idHash) => deleteSession(q, idHash),
    async listLive(userId, now) {
      const rows = await q
        .selectFrom('sessions')
        .select(['id_hash', 'user_agent', 'address', 'created_at', 'last_seen_at'])
        .where('user_id', '=', userId)
        .where('expires_at', '>', now)
        .orderBy('last_seen_at', 'desc')
        .execute();
      return rows.map((row) => ({
        idHash: row.id_hash,
        userAgent: row.user_agent,
        address: row.address,
        createdAt: Number(row.created_at),
        lastSeenAt: Number(row.last_seen_at ?? row.created_at),
      }));
    },
    async endOwn(userId, idHash) {
      if (!isId('session', idHash)) return false;
      const result = await q.deleteFrom('sessions').where('user_id', '=', userId).where('id_hash', '=', idHash).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async endAllBut(userId, keep) {
      const result = await q.deleteFrom('sessions').where('user_id', '=', userId).where('id_hash', '!=', keep).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
