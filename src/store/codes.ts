/** Authorization codes, kept only as the SHA-256 of the code (SPEC §6). */
import type { Kysely, Selectable } from 'kysely';
import type { AuthorizationCodeTable, Database } from '../db/schema.js';

type Q = Kysely<Database>;
export type AuthorizationCode = Selectable<AuthorizationCodeTable>;

export async function insertAuthorizationCode(db: Q, code: AuthorizationCode): Promise<void> {
  await db.insertInto('authorization_codes').values(code).execute();
}

export function findAuthorizationCode(db: Q, codeHash: string): Promise<AuthorizationCode | undefined> {
  return db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/**
 * Marks a live, unused code as used. The condition is the whole guard: of any number of
 * concurrent exchanges on any number of processes, exactly one sees `true` (RFC 6749 §4.1.2).
 */
export async function consumeAuthorizationCode(db: Q, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('authorization_codes')
    .set({ consumed_at: now })
    .where('code_hash', '=', codeHash)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
