/**
 * The single-use step of a code exchange or a refresh rotation as SQLite runs it: the conditional
 * UPDATE that claims the code or the token, then the insert of the new token pair — a claim of
 * several statements (db/declared.ts), run synchronously in the executor's group commit, all or
 * nothing (claimAndInsertPair of ./tokens.ts is the same step in a Kysely transaction). The
 * statements are Kysely queries compiled once (db/prepared-query.ts) — the pair's insert is the one
 * a code exchange uses on PostgreSQL — kept on the write connection. The write lock makes the
 * UPDATE's condition the single-use guard across processes sharing the file.
 */
import type { Kysely } from 'kysely';
import type { ClaimOnSqlite } from '../db/declared.js';
import type { KeptStatement } from '../db/kept-statements.js';
import type { PreparedQuery } from '../db/prepared-query.js';
import type { Database } from '../db/schema.js';
import { insertAccessToken, insertRefreshToken, refreshTokenColumns, tokenColumns, type NewRefreshTokenRow, type NewTokenRow } from './tokens.js';

/** Most claims one transaction or statement commits; more start the next. */
export const MAX_GROUP = 128;

/** A claim: the arguments of the claiming UPDATE, and the new pair. */
export interface PairClaim<Args extends unknown[]> {
  claim: Args;
  access: NewTokenRow;
  refresh: NewRefreshTokenRow;
}

/**
 * True when `claim` changed exactly one row and the pair was inserted. When the pair's grant or app
 * was deleted meanwhile the insert fails on its foreign key: declare the claim with
 * `lost: isForeignKeyViolation` (tokens.ts), so that the call answers false.
 */
export function claimedPair<In, Args extends [] | unknown[]>(q: Kysely<Database>, claim: PreparedQuery<Args, unknown>, of: (input: In) => PairClaim<Args>): ClaimOnSqlite<In> {
  const run = <A extends unknown[]>(statement: KeptStatement, query: PreparedQuery<A, unknown>, ...args: A) => {
    const { sql, values } = query.bind(q, ...args);
    return statement(sql).run(...values);
  };
  return (statement, input) => {
    const { claim: args, access, refresh } = of(input);
    if (run(statement, claim, ...args).changes !== 1) return false;
    run(statement, insertAccessToken, ...tokenColumns(access));
    run(statement, insertRefreshToken, ...refreshTokenColumns(refresh));
    return true;
  };
}
