/** The refresh-token rotation on PostgreSQL (the interface and the rules: ../refresh-rotation.ts). */
import type pg from 'pg';
import { batchedCalls, type BatchedCall } from '../../db/batched-calls.js';
import { MAX_GROUP, type RefreshRotation, type Rotation } from '../refresh-rotation.js';
import { isForeignKeyViolation } from '../tokens.js';
import { postgresClientReads } from './client-reads.js';

/**
 * PostgreSQL: the rotations of one turn go as ONE statement (batched-calls.ts), whatever their
 * number — one round trip, one transaction and one commit.
 */
export function postgresRefreshRotation(pool: pg.Pool): RefreshRotation {
  // With the apps read in the same turn, in one statement.
  const reads = postgresClientReads(pool);
  /**
   * The rotations of a batch, each still its own conditional UPDATE of its own row: under READ
   * COMMITTED a concurrent UPDATE of the same row (another process's batch) waits for the winner's
   * commit, re-checks `rotated_at IS NULL` on the new row version, matches nothing, and the INSERTs
   * (which join the UPDATE's result by the rotation's number) insert nothing for it. Were a token
   * twice in one statement, its row would be updated once and one new pair inserted for it; the
   * batch below never sends it twice (a duplicate asks again after the first has committed, and
   * loses).
   */
  const rotateText = `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                           $9::text[], $10::bigint[], $11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[], $16::text[]) WITH ORDINALITY
        AS i(old_key, now, replay, access_key, family_id, grant_id, app_id, user_id, access_scope, access_expires, refresh_key, refresh_scope, refresh_expires, access_jkt, refresh_jkt, requested_scope, n)
    ), rotated AS (
      UPDATE refresh_tokens t SET rotated_at = i.now, replay_response = i.replay
      FROM input i
      WHERE t.token_key = i.old_key AND t.rotated_at IS NULL AND t.expires_at > i.now
      RETURNING i.n
    ), new_access AS (
      INSERT INTO access_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt)
      SELECT i.access_key, i.family_id, i.grant_id, i.app_id, i.user_id, i.access_scope, i.access_expires, i.now, i.access_jkt
      FROM input i JOIN rotated r ON r.n = i.n
    ), new_refresh AS (
      INSERT INTO refresh_tokens (token_key, family_id, grant_id, app_id, user_id, scope, expires_at, created_at, jkt, requested_scope)
      SELECT i.refresh_key, i.family_id, i.grant_id, i.app_id, i.user_id, i.refresh_scope, i.refresh_expires, i.now, i.refresh_jkt, i.requested_scope
      FROM input i JOIN rotated r ON r.n = i.n
    )
    SELECT n FROM rotated`;

  /** For each of `rotations` (distinct old keys), whether this statement rotated it. */
  const rotateAll = async (rotations: readonly Rotation[]): Promise<boolean[]> => {
    const columns: unknown[][] = Array.from({ length: 16 }, () => []);
    for (const { oldHash, now, replayResponse, access: a, refresh: r } of rotations) {
      if (a.family_id !== r.family_id || a.grant_id !== r.grant_id || a.app_id !== r.app_id || a.user_id !== r.user_id || a.created_at !== now || r.created_at !== now) {
        throw new Error('a rotated pair shares its family, grant, app, user and creation time');
      }
      const row = [oldHash, now, replayResponse, a.token_key, a.family_id, a.grant_id, a.app_id, a.user_id, a.scope, a.expires_at, r.token_key, r.scope, r.expires_at, a.jkt, r.jkt, r.requested_scope];
      row.forEach((value, i) => columns[i]!.push(value));
    }
    // Unnamed, so planned at each execution with the batch's keys and the table's current size: a
    // plan made once while refresh_tokens was nearly empty would scan it for the UPDATE's join.
    const result = await pool.query<[string]>({ text: rotateText, values: columns, rowMode: 'array' });
    const rotated = rotations.map(() => false);
    for (const [n] of result.rows) rotated[Number(n) - 1] = true;
    return rotated;
  };

  /**
   * Alone, a rotation whose grant or app was deleted meanwhile lost that race (isForeignKeyViolation);
   * in a batch, that error makes batchedCalls run each rotation alone, to find which one it was.
   */
  const rotateAlone = async (rotation: Rotation): Promise<boolean> => {
    try {
      return (await rotateAll([rotation]))[0]!;
    } catch (error) {
      if (isForeignKeyViolation(error)) return false;
      throw error;
    }
  };

  /**
   * One statement for the batch's distinct tokens, then each duplicate alone. When the statement
   * fails (one rotation's grant deleted meanwhile, say, or a deadlock with another process's
   * batch), it rolled back as a whole and batchedCalls runs each rotation alone.
   */
  const rotateBatch = async (calls: readonly BatchedCall<Rotation, boolean>[]): Promise<void> => {
    const first = new Map<string, BatchedCall<Rotation, boolean>>();
    const again: BatchedCall<Rotation, boolean>[] = [];
    for (const call of calls) {
      if (first.has(call.input.oldHash)) again.push(call);
      else first.set(call.input.oldHash, call);
    }
    // Sorted, so that two processes' batches of the same tokens tend to lock them in the same order
    // (the join's plan decides the order; a deadlock is resolved by running each alone).
    const batch = [...first.values()].sort((x, y) => (x.input.oldHash < y.input.oldHash ? -1 : 1));
    const rotated = batch.length === 1 ? [await rotateAlone(batch[0]!.input)] : await rotateAll(batch.map((call) => call.input));
    batch.forEach((call, i) => call.resolve(rotated[i]!));
    for (const call of again) call.resolve(await rotateAlone(call.input));
  };

  return {
    find: (tokenHash) => reads.refreshToken(tokenHash),
    rotate: batchedCalls(rotateBatch, MAX_GROUP),
  };
}
