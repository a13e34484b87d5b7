/** DPoP proofs seen, on SQLite (the interface and the statement: ../dpop-proofs.ts). */
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { batchedCalls, type BatchedCall } from '../../db/batched-calls.js';
import { onSqliteHandle } from '../../db/prepared-query.js';
import type { Database } from '../../db/schema.js';
import { insertProof, MAX_BATCH, type DpopProofStore, type ProofRecord } from '../dpop-proofs.js';

/**
 * Group commit: the proofs recorded during one turn of the event loop are inserted in one
 * transaction (batched-calls.ts) — the commit is most of an insert's cost. Each insert is still its
 * own statement, so of two inserts of one key in a group the first records it and the second
 * finds it, as in two transactions; the write lock orders them across processes. While a Kysely
 * transaction is open on the handle (it spans awaits, and a statement run on the handle would
 * join it), the inserts go through Kysely, which waits for that transaction to end.
 */
export function sqliteDpopProofStore(kysely: Kysely<Database>, handle: SQLite.Database): DpopProofStore {
  const insert = onSqliteHandle(handle, kysely, insertProof);
  const insertGroup = handle.transaction((records: ProofRecord[]) => records.map(({ proofKey, expiresAt }) => insert.run(proofKey, expiresAt).changes === 1));
  const viaKysely = async ({ proofKey, expiresAt }: ProofRecord) => Number((await insertProof(kysely, proofKey, expiresAt)).numAffectedRows ?? 0n) === 1;

  const commitGroup = (group: readonly BatchedCall<ProofRecord, boolean>[]): void => {
    if (handle.inTransaction) {
      for (const call of group) viaKysely(call.input).then(call.resolve, call.reject);
      return;
    }
    // When one insert fails, the whole group rolls back, and batchedCalls runs each alone.
    const recorded = insertGroup.immediate(group.map((call) => call.input));
    group.forEach((call, i) => call.resolve(recorded[i]!));
  };
  // A group that failed for the database (a lock held past busy_timeout, a full disk) is not run
  // again alone: batchedCalls' default.
  const record = batchedCalls(commitGroup, MAX_BATCH);
  return { remember: (proofKey, expiresAt) => record({ proofKey, expiresAt }) };
}
