/**
 * The DPoP proofs seen within their window (RFC 9449 §11.1): a proof's key is inserted once, and
 * the table's unique key refuses a second insert on every process sharing the database. Rows are
 * deleted by the sweeper once their window has passed (store/sweep.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface DpopProofStore {
  /** Records the proof; false when it was recorded before (a replay). */
  remember(proofKey: string, expiresAt: number): Promise<boolean>;
}

export function createDpopProofStore(db: Kysely<Database>): DpopProofStore {
  return {
    async remember(proofKey, expiresAt) {
      const result = await db
        .insertInto('dpop_proofs')
        .values({ proof_key: proofKey, expires_at: expiresAt })
        .onConflict((oc) => oc.column('proof_key').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
  };
}
