/** Authorization codes, kept only as the SHA-256 of the code (docs/SECURITY.md). */
import type { Kysely, Selectable } from 'kysely';
import { declareClaim } from '../db/declared.js';
import { preparedQuery } from '../db/prepared-query.js';
import { preparedRead } from '../db/prepared-reads.js';
import type { Db } from '../db/database.js';
import type { AuthorizationCodeTable, Database } from '../db/schema.js';
import { claimedPair, MAX_GROUP } from './claimed-pairs.js';
import { claimAndInsertPair, isForeignKeyViolation, type NewRefreshTokenRow, type NewTokenRow } from './tokens.js';

type Q = Kysely<Database>;
export type AuthorizationCode = Selectable<AuthorizationCodeTable>;

const insertCodeRow = preparedQuery(
  (db: Q, codeHash: string, appId: string, userId: string, grantId: string, redirectUri: string, scope: string,
    codeChallenge: string | null, codeChallengeMethod: string | null, expiresAt: number, consumedAt: number | null, createdAt: number, requestedScope: string | null) =>
    db.insertInto('authorization_codes').values({
      code_hash: codeHash, app_id: appId, user_id: userId, grant_id: grantId, redirect_uri: redirectUri, scope,
      code_challenge: codeChallenge, code_challenge_method: codeChallengeMethod, expires_at: expiresAt, consumed_at: consumedAt, created_at: createdAt,
      requested_scope: requestedScope,
    }),
);

export async function insertAuthorizationCode(db: Q, c: AuthorizationCode): Promise<void> {
  await insertCodeRow(
    db, c.code_hash, c.app_id, c.user_id, c.grant_id, c.redirect_uri, c.scope, c.code_challenge, c.code_challenge_method, c.expires_at, c.consumed_at, c.created_at, c.requested_scope,
  );
}

/**
 * Marks a live, unused code as used. The condition is the whole guard: of any number of
 * concurrent exchanges on any number of processes, exactly one sees `true` (RFC 6749 §4.1.2).
 */
const markCodeConsumed = preparedQuery((db: Q, consumedAt: number, codeHash: string, now: number) =>
  db
    .updateTable('authorization_codes')
    .set({ consumed_at: consumedAt })
    .where('code_hash', '=', codeHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now),
);

async function consumeAuthorizationCode(db: Q, codeHash: string, now: number): Promise<boolean> {
  const result = await markCodeConsumed(db, now, codeHash, now);
  return Number(result.numAffectedRows) === 1;
}

export interface CodeStore {
  insert(code: AuthorizationCode): Promise<void>;
  find(codeHash: string): Promise<AuthorizationCode | undefined>;
  /**
   * Consumes a live, unused code and stores the token pair issued for it, in one transaction:
   * false (and nothing written) when the code was used already, has expired, or its grant or app
   * was deleted meanwhile.
   */
  redeem(codeHash: string, now: number, access: NewTokenRow, refresh: NewRefreshTokenRow): Promise<boolean>;
}

interface Redemption {
  codeHash: string;
  now: number;
  access: NewTokenRow;
  refresh: NewRefreshTokenRow;
}

export function createCodeStore(db: Db): CodeStore {
  const q = db.kysely;
  // On SQLite the claim and the pair commit on the write connection, several exchanges per commit
  // when they arrive together (claimed-pairs.ts); on PostgreSQL in a Kysely transaction.
  const claimed =
    db.dialect === 'sqlite'
      ? db.executor.claimer(
          declareClaim<Redemption>({
            sqlite: claimedPair(q, markCodeConsumed, (r) => ({ claim: [r.now, r.codeHash, r.now], access: r.access, refresh: r.refresh })),
            max: MAX_GROUP,
            // An exchange whose grant or app was deleted meanwhile lost that race.
            lost: isForeignKeyViolation,
          }),
        )
      : null;
  // Every code exchange reads its code first: with the other reads of the turn.
  const selectCode = preparedRead<[string], AuthorizationCode>(db, (k, codeHash) => k.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash));
  return {
    insert: (code) => insertAuthorizationCode(q, code),
    find: async (codeHash) => (await selectCode(codeHash))[0],
    redeem: (codeHash, now, access, refresh) =>
      claimed ? claimed({ codeHash, now, access, refresh }) : claimAndInsertPair(q, (trx) => consumeAuthorizationCode(trx, codeHash, now), access, refresh),
  };
}
