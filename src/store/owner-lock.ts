/**
 * A cap on an owner's rows (an app's webhook endpoints, a developer's test people) holds only if
 * counting them and inserting more happen as one: two requests that both count 9 of 10 would both
 * insert. `withOwnerLocked`
 * runs such work as one transaction that first takes a lock every such transaction of the same
 * owner takes, so they run one after another:
 * - PostgreSQL: the owner's row, `SELECT … FOR NO KEY UPDATE`. It makes another such transaction
 *   (and an UPDATE of the row) wait, but not the foreign-key checks of rows that merely reference
 *   the owner (those take FOR KEY SHARE), so tokens and events of the app are not held up.
 * - SQLite: the database's one write lock, `BEGIN IMMEDIATE`, taken before the count. A deferred
 *   transaction would read first and take the lock at its INSERT, and fail with SQLITE_BUSY when
 *   another process (several may share one file) wrote in between; this one waits for it
 *   (busy_timeout) and then counts what it wrote. Within a process the write connection is held
 *   for the whole transaction, so other writes wait for it (db/sqlite-executor.ts).
 * `work` runs its statements on the handle it is given and opens no transaction of its own.
 */
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import { immediateTransaction } from '../db/sqlite-executor.js';
import type { Database } from '../db/schema.js';

/** An app (its webhook endpoints) or a user (the days of their series, store/steps.ts; a developer's test people). */
export interface Owner {
  table: 'apps' | 'users';
  id: string;
}

export async function withOwnerLocked<T>(db: Db, owner: Owner, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.dialect === 'postgres') {
    return db.kysely.transaction().execute(async (trx) => {
      await sql`select 1 from ${sql.table(owner.table)} where id = ${owner.id} for no key update`.execute(trx);
      return work(trx);
    });
  }
  return immediateTransaction(db.kysely, work);
}
