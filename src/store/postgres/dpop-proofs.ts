/** DPoP proofs seen, on PostgreSQL (the interface: ../dpop-proofs.ts). */
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { MAX_BATCH, type DpopProofStore, type ProofRecord } from '../dpop-proofs.js';
import { unnestedParameters } from './kept-plans.js';

/**
 * The proofs recorded during one turn of the event loop go as ONE statement (batched-calls.ts): one
 * round trip and one commit. A key inserted by a concurrent statement of another process is waited
 * for (its unique index entry) and then skipped: `returning` names exactly the keys this statement
 * recorded. A key twice in one batch is sent once; its later calls are replays.
 */
export function postgresDpopProofStore(pool: pg.Pool): DpopProofStore {
  const text = `insert into dpop_proofs (proof_key, expires_at)
    select * from ${unnestedParameters('text', 'bigint')}
    on conflict (proof_key) do nothing
    returning proof_key`;
  const record = batchedCalls<ProofRecord, boolean>(async (calls) => {
    const first = new Map<string, (typeof calls)[number]>();
    for (const call of calls) if (!first.has(call.input.proofKey)) first.set(call.input.proofKey, call);
    const keys = [...first.keys()];
    const expiries = [...first.values()].map((call) => call.input.expiresAt);
    const result = await pool.query<[string]>({ name: 'stride_dpop_remember_many', text, values: [keys, expiries], rowMode: 'array' });
    const recorded = new Set(result.rows.map(([key]) => key));
    for (const call of calls) call.resolve(first.get(call.input.proofKey) === call && recorded.has(call.input.proofKey));
  }, MAX_BATCH);
  return { remember: (proofKey, expiresAt) => record({ proofKey, expiresAt }) };
}
