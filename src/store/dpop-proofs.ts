/**
 * The DPoP proofs seen within their window (RFC 9449 §11.1): a proof's key is inserted once, and
 * the table's unique key refuses a second insert on every process sharing the database. Rows are
 * deleted by the sweeper once their window has passed (store/sweep.ts).
 *
 * Recording a proof is a claim declared here and run by the executor (db/declared.ts): on SQLite
 * the inserts of one turn of the event loop in one transaction, each its own statement, so of two
 * inserts of one key in a group the first records it and the second finds it; on PostgreSQL in one
 * statement, where a key inserted by a concurrent statement of another process is waited for (its
 * unique index entry) and then skipped: `returning` names exactly the keys this statement recorded.
 */
import type { Db } from '../db/database.js';
import { declareClaim, turnStatement } from '../db/declared.js';

export interface DpopProofStore {
  /** Records the proof; false when it was recorded before (a replay). */
  remember(proofKey: string, expiresAt: number): Promise<boolean>;
}

const REMEMBER = declareClaim<readonly [proofKey: string, expiresAt: number]>({
  sqlite: 'insert into dpop_proofs (proof_key, expires_at) values (?, ?) on conflict (proof_key) do nothing',
  postgres: turnStatement({
    name: 'stride_dpop_remember_many',
    parameters: { proof_key: 'text', expires_at: 'bigint' },
    text: (input) => `insert into dpop_proofs (proof_key, expires_at)
      select proof_key, expires_at from ${input}
      on conflict (proof_key) do nothing
      returning proof_key`,
  }),
  values: (proof) => proof,
});

export function createDpopProofStore(db: Db): DpopProofStore {
  const remember = db.executor.claimer(REMEMBER);
  return { remember: (proofKey, expiresAt) => remember([proofKey, expiresAt]) };
}
