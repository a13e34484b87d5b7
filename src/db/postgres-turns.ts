/**
 * PostgreSQL: the declared reads and claims (./declared.ts) of one turn of the event loop as ONE
 * statement (./batched-calls.ts) — the pg client's and the backend's work per round trip cost more
 * than the rows it carries, and a claim's commit more than its row. The calls' parameters go as
 * arrays, an element per call, which the statement reads as the rows of `input`.
 */
import type pg from 'pg';
import { batchedCalls, type BatchedCall } from './batched-calls.js';
import { lostAlone, MAX_TURN_CALLS, type DeclaredClaim, type DeclaredRead, type TurnStatement } from './declared.js';

interface ReadCall {
  read: DeclaredRead<readonly unknown[], unknown>;
  params: readonly unknown[];
}

/**
 * The reads of a turn, by their statement: reads that share a statement share its batches (the
 * apps and the refresh tokens a token request reads, one round trip for both). Calls with the same
 * parameters share one row of `input` (a turn's checks of one token); row `n` of the answer
 * belongs to the `n`-th row of `input`.
 */
export function turnReads(pool: pg.Pool): <Params extends readonly unknown[], Out>(read: DeclaredRead<Params, Out>) => (...params: Params) => Promise<Out | undefined> {
  const byStatement = new Map<TurnStatement, (call: ReadCall) => Promise<unknown>>();
  const batchOf = (statement: TurnStatement) => {
    let batch = byStatement.get(statement);
    if (batch === undefined) {
      batch = batchedCalls((calls: readonly BatchedCall<ReadCall, unknown>[]) => readAll(pool, statement, calls), MAX_TURN_CALLS);
      byStatement.set(statement, batch);
    }
    return batch;
  };
  return <Params extends readonly unknown[], Out>(read: DeclaredRead<Params, Out>) => {
    const batch = batchOf(read.postgres);
    const call = read as unknown as DeclaredRead<readonly unknown[], unknown>;
    return (...params: Params) => batch({ read: call, params }) as Promise<Out | undefined>;
  };
}

async function readAll(pool: pg.Pool, statement: TurnStatement, calls: readonly BatchedCall<ReadCall, unknown>[]): Promise<void> {
  const arrays: unknown[][] = statement.parameters.map(() => []);
  const inputOf = new Array<number>(calls.length);
  // The first row of `input` given each first parameter; a call whose parameters all match it shares it.
  const firstFor = new Map<unknown, number>();
  let rows = 0;
  calls.forEach(({ input: { read, params } }, i) => {
    const key = params[0];
    const earlier = firstFor.get(key);
    if (earlier !== undefined && read.positions.every((at, p) => arrays[p]![earlier] === (at === -1 ? null : params[at]))) {
      inputOf[i] = earlier;
      return;
    }
    read.positions.forEach((at, p) => arrays[p]!.push(at === -1 ? null : params[at]));
    if (earlier === undefined) firstFor.set(key, rows);
    inputOf[i] = rows++;
  });
  const result = await pool.query<unknown[]>({ name: statement.name ?? undefined, text: statement.text, values: arrays, rowMode: 'array' });
  const answers = new Array<unknown[] | undefined>(rows);
  for (const row of result.rows) answers[Number(row[row.length - 1]) - 1] ??= row;
  calls.forEach(({ input: { read }, resolve }, i) => {
    const row = answers[inputOf[i]!];
    const decode = read.decode as (row: unknown) => unknown;
    if (row === undefined) resolve(undefined);
    else if (read.rows === 'values') resolve(decode(row));
    else resolve(row[read.column] == null ? undefined : decode(row[read.column]));
  });
}

/**
 * The claims of a turn in one statement, their keys distinct and in order — so that two processes'
 * batches of the same rows tend to take their locks in the same order (a deadlock fails both
 * statements, and batchedCalls then runs each claim alone). Under READ COMMITTED a concurrent
 * claim of the same row (another process's batch) waits for the winner's commit, re-checks its
 * condition on the new row version and claims nothing. A call whose key is already in the batch
 * goes after it has committed, in the next one.
 */
export function turnClaims(pool: pg.Pool): <In>(claim: DeclaredClaim<In>) => (input: In) => Promise<boolean> {
  return <In>(claim: DeclaredClaim<In>) => {
    const statement = claim.postgres;
    if (statement === null) throw new Error('this claim is declared for SQLite only');
    const claimAll = async (calls: readonly BatchedCall<In, boolean>[]): Promise<void> => {
      const values = calls.map((call) => claim.values(call.input));
      // The index of the first call of each key.
      const first = new Map<unknown, number>();
      const again: BatchedCall<In, boolean>[] = [];
      calls.forEach((call, i) => {
        if (first.has(values[i]![0])) again.push(call);
        else first.set(values[i]![0], i);
      });
      const batch = [...first.values()].sort((x, y) => ((values[x]![0] as string) < (values[y]![0] as string) ? -1 : 1));
      const arrays: unknown[][] = statement.parameters.map(() => []);
      for (const i of batch) values[i]!.forEach((value, p) => arrays[p]!.push(value));
      let claimed: Set<unknown>;
      try {
        const result = await pool.query<unknown[]>({ name: statement.name ?? undefined, text: statement.text, values: arrays, rowMode: 'array' });
        claimed = new Set(result.rows.map((row) => row[0]));
      } catch (error) {
        if (!lostAlone(claim.lost, batch.length, error)) throw error;
        claimed = new Set();
      }
      for (const i of batch) calls[i]!.resolve(claimed.has(values[i]![0]));
      for (const call of again) claimEach(call.input).then(call.resolve, call.reject);
    };
    const claimEach = batchedCalls(claimAll, claim.max);
    return claimEach;
  };
}
