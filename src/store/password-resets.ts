/**
 * Single-use links to set a new password (docs/operations.md, "A forgotten password"), kept by the
 * SHA-256 of their token like every credential. Using one sets the password, marks the link used
 * and ends every session of the account, in one transaction.
 */
import type { Db } from '../db/database.js';

/** What became of a link that was opened or sent: only 'set' changed anything. */
export type ResetOutcome = 'set' | 'unknown' | 'used' | 'expired';

export interface PasswordResetStore {
  create(reset: { tokenHash: string; userId: string; expiresAt: number; now: number }): Promise<void>;
  /** The state of the link whose token hashes to `tokenHash` at `now`, with its user when it can be used. */
  find(tokenHash: string, now: number): Promise<{ state: 'usable'; userId: string } | { state: Exclude<ResetOutcome, 'set'> }>;
  /** Sets `passwordHash` as the password of the link's user, if the link is still usable at `now`. */
  use(tokenHash: string, passwordHash: string, now: number): Promise<ResetOutcome>;
}

export function createPasswordResetStore(db: Db): PasswordResetStore {
  const q = db.kysely;
  const stateOf = (row: { used_at: number | null; expires_at: number } | undefined, now: number) =>
    row === undefined ? 'unknown' : row.used_at !== null ? 'used' : Number(row.expires_at) <= now ? 'expired' : 'usable';
  return {
    async create({ tokenHash, userId, expiresAt, now }) {
      await q.insertInto('password_resets').values({ token_hash: tokenHash, user_id: userId, expires_at: expiresAt, created_at: now, used_at: null }).execute();
    },
    async find(tokenHash, now) {
      const row = await q.selectFrom('password_resets').select(['user_id', 'used_at', 'expires_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
      const state = stateOf(row, now);
      return state === 'usable' ? { state, userId: row!.user_id } : { state };
    },
    use: (tokenHash, passwordHash, now) =>
      q.transaction().execute(async (trx) => {
        // Marked used first, and only if unused and unexpired: two uses at once set one password.
        const marked = await trx
          .updateTable('password_resets')
          .set({ used_at: now })
          .where('token_hash', '=', tokenHash)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .returning('user_id')
          .executeTakeFirst();
        if (marked === undefined) {
          const row = await trx.selectFrom('password_resets').select(['used_at', 'expires_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
          return stateOf(row, now) as ResetOutcome;
        }
        await trx.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', marked.user_id).execute();
        await trx.deleteFrom('sessions').where('user_id', '=', marked.user_id).execute();
        // Any other link of the account is spent too: the password it was for has changed.
        await trx.updateTable('password_resets').set({ used_at: now }).where('user_id', '=', marked.user_id).where('used_at', 'is', null).execute();
        return 'set';
      }),
  };
}
