/** The bearer check on SQLite (the statement and the row: ../bearer-lookup.ts). */
import type { SqliteExecutor } from '../../db/executor.js';
import { FIND_COLUMNS, FIND_JOINS, findRowOf, grantOf, TOUCH_SQL, type BearerLookup } from '../bearer-lookup.js';

const FIND_SQL = `select ${FIND_COLUMNS} ${FIND_JOINS} where t.token_key = ? and t.expires_at > ?`;

export function sqliteBearerLookup(executor: SqliteExecutor): BearerLookup {
  return {
    // With the other reads of the turn, on the read connection. The row comes as an array of
    // FIND_COLUMNS' values (findRowOf).
    find: (tokenHash, now) =>
      executor.read((connection) => {
        const values = connection.statement<unknown[]>(FIND_SQL, 'raw').get(tokenHash, now);
        return values && grantOf(findRowOf(values));
      }),
    touch: (grantId, now) =>
      executor.write((connection) => {
        connection.statement(TOUCH_SQL).run(now, grantId);
      }),
  };
}
