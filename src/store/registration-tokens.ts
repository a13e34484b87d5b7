/** RFC 7591 §3 initial access tokens, kept only as their SHA-256 (docs/decisions/0021-dynamic-client-registration.md). */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface RegistrationTokenStore {
  insert(tokenHash: string, expiresAt: number | null, now: number): Promise<void>;
  /** Whether a token with this hash exists and has not expired at `now`. */
  isLive(tokenHash: string, now: number): Promise<boolean>;
}

export function createRegistrationTokenStore(q: Kysely<Database>): RegistrationTokenStore {
  return {
    async insert(tokenHash, expiresAt, now) {
      await q.insertInto('registration_tokens').values({ token_hash: tokenHash, expires_at: expiresAt, created_at: now }).execute();
    },
    async isLive(tokenHash, now) {
      const row = await q.selectFrom('registration_tokens').select('expires_at').where('token_hash', '=', tokenHash).executeTakeFirst();
      return row !== undefined && (row.expires_at === null || Number(row.expires_at) > now);
    },
  };
}
