/**
 * Deletes expired codes, tokens and sessions (README, SWEEP_INTERVAL), so tables do not grow without end.
 * Rotated refresh tokens are kept until their own expiry: reuse detection needs them.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface SweepCounts {
  authorizationCodes: number;
  accessTokens: number;
  refreshTokens: number;
  sessions: number;
}

export async function sweepExpired(db: Kysely<Database>, now: number): Promise<SweepCounts> {
  const run = async (table: 'authorization_codes' | 'access_tokens' | 'refresh_tokens' | 'sessions') =>
    Number((await db.deleteFrom(table).where('expires_at', '<=', now).executeTakeFirst()).numDeletedRows);
  return {
    authorizationCodes: await run('authorization_codes'),
    accessTokens: await run('access_tokens'),
    refreshTokens: await run('refresh_tokens'),
    sessions: await run('sessions'),
  };
}
