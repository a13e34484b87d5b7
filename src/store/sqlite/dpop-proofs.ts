/** DPoP proofs seen, on SQLite (the interface and the statement: ../dpop-proofs.ts). */
import type { Kysely } from 'kysely';
import { batchedCalls, type BatchedCall } from '../../db/batched-calls.js';
import type { SqliteExecutor } from '../../db/executor.js';
import type { Database } from '../../db/schema.js';
import { insertProof, MAX_BATCH, type DpopProofStore, type ProofRecord } from '../dpop-proofs.js';

/**
 * Group commit: the proofs recorded during one turn of the event loop are inserted in one
 * transaction (batched-calls.ts) — the commit is most of an insert's cost — in the write
 * connection's turn (db/sqlite-executor.ts). Each insert is still its own statement, so of two
 * inserts of one key in a group the first records it and the second finds it, as in two
 * transactions; the write lock orders them across processes.
 */
export function sqliteDpopProofStore(kysely: Kysely<Database>, executor: SqliteExecutor): DpopProofStore {
  const commitGroup = (group: readonly BatchedCall<ProofRecord, boolean>[]) =>
    executor.write((connection) => {
      const insert = (proofKey: string, expiresAt: number) => {
        const { sql, values } = insertProof.bind(kysely, proofKey, expiresAt);
        return connection.statement(sql).run(...values).changes === 1;
      };
      // When one insert fails, the whole group rolls back, and batchedCalls runs each alone.
      const recorded = connection.transaction(() => group.map(({ input }) => insert(input.proofKey, input.expiresAt))).immediate();
      group.forEach((call, i) => call.resolve(recorded[i]!));
    });
  // A group that failed for the database (a lock held past busy_timeout, a full disk) is not run
  // again alone: batchedCalls' default.
  const record = batchedCalls(commitGroup, MAX_BATCH);
  return { remember: (proofKey, expiresAt) => record({ proofKey, expiresAt }) };
}
