/**
 * The DPoP proofs seen within their window (RFC 9449 §11.1): a proof's key is inserted once, and
 * the table's unique key refuses a second insert on every process sharing the database. Rows are
 * deleted by the sweeper once their window has passed (store/sweep.ts).
 *
 * The statement here; its execution per dialect in sqlite/dpop-proofs.ts (the inserts of one turn
 * of the event loop in one transaction) and postgres/dpop-proofs.ts (in one statement).
 */
import type { Kysely } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database } from '../db/schema.js';

export interface DpopProofStore {
  /** Records the proof; false when it was recorded before (a replay). */
  remember(proofKey: string, expiresAt: number): Promise<boolean>;
}

export interface ProofRecord {
  proofKey: string;
  expiresAt: number;
}

/** Most proofs one transaction or statement records; more start the next. */
export const MAX_BATCH = 256;

/** One proof's insert; it changes no row when the key is there already. */
export const insertProof = preparedQuery((db: Kysely<Database>, proofKey: string, expiresAt: number) =>
  db
    .insertInto('dpop_proofs')
    .values({ proof_key: proofKey, expires_at: expiresAt })
    .onConflict((oc) => oc.column('proof_key').doNothing()),
);
