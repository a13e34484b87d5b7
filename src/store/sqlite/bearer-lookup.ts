/** The bearer check on SQLite (the statement and the row: ../bearer-lookup.ts). */
import type SQLite from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import { FIND_COLUMNS, FIND_JOINS, findRowOf, grantOf, TOUCH_SQL, type BearerLookup } from '../bearer-lookup.js';

const FIND_SQL = `select ${FIND_COLUMNS} ${FIND_JOINS} where t.token_key = ? and t.expires_at > ?`;

export function sqliteBearerLookup(sqlite: SQLite.Database): BearerLookup {
  // Prepared on first use: the app may be built before the schema is migrated.
  let find: Statement<[string, number], unknown[]> | undefined;
  let touch: Statement | undefined;
  const findOne = (tokenHash: string, now: number) => {
    // The row as an array of FIND_COLUMNS' values (findRowOf).
    find ??= sqlite.prepare<[string, number], unknown[]>(FIND_SQL).raw(true);
    const values = find.get(tokenHash, now);
    return values && grantOf(findRowOf(values));
  };
  const turnRead = sqliteTurnReads(sqlite);
  return {
    // With the other reads of the turn, in one read transaction.
    find: (tokenHash, now) => turnRead(() => findOne(tokenHash, now)),
    touch(grantId, now) {
      touch ??= sqlite.prepare(TOUCH_SQL);
      touch.run(now, grantId);
    },
  };
}
