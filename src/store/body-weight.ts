/**
 * Body weight measurements (docs/api.md, "Body weight"): one row per measurement, keyed by the
 * person and its time, the weight and body fat as integers (hundredths). A measurement with the
 * same time as a stored one replaces it and keeps its id. Every change records its body.updated
 * event in the same transaction.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import { preparedRead } from '../db/prepared-reads.js';
import type { Database } from '../db/schema.js';
import { recordEvent } from './events.js';
import { withOwnerLocked } from './owner-lock.js';
import { formatRecordId, newIdTag, parseRecordId } from './record-ids.js';
import type { DataChange } from './sleep.js';
import { noteImportStep, type ImportStep, type StepOutcome } from './takeout-imports.js';

/** A measurement in the stored units: hundredths of a kilogram and of a percent (null: no body fat). */
export interface WeightInput {
  time: number;
  kg_hundredths: number;
  fat_hundredths: number | null;
}

export interface StoredWeight extends WeightInput {
  id: string;
}

export interface BodyWeightStore {
  /** Stores the measurement, replacing the one at the same time (which keeps its id). */
  save(userId: string, weight: WeightInput, change: DataChange): Promise<StoredWeight>;
  /**
   * An import's measurements (store/takeout-imports.ts), in one transaction: each is stored unless
   * the person holds one at its time (kept as stored); then `step` is noted with the stored ones'
   * dates (by `dateOf`). Records no event of its own.
   */
  addNew(userId: string, weights: readonly WeightInput[], step: ImportStep, dateOf: (time: number) => string): Promise<StepOutcome>;
  /** The measurements whose time is in [from, to), oldest first. */
  within(userId: string, from: number, to: number): Promise<StoredWeight[]>;
  /** Deletes the measurement `id` names; the deleted one, or null when the person has none by that id. */
  remove(userId: string, id: string, change: DataChange): Promise<StoredWeight | null>;
  /** The measurements after `afterTime` (exclusive), oldest first, at most `limit`: one page of an export. */
  weightsAfter(userId: string, afterTime: number, limit: number): Promise<StoredWeight[]>;
}

interface WeightRow {
  time: number | string;
  id_tag: number;
  kg_hundredths: number;
  fat_hundredths: number | null;
}

const COLUMNS = ['time', 'id_tag', 'kg_hundredths', 'fat_hundredths'] as const;

function weightOf(row: WeightRow): StoredWeight {
  const time = Number(row.time);
  return {
    id: formatRecordId('wgt', { time, tag: row.id_tag }),
    time,
    kg_hundredths: Number(row.kg_hundredths),
    fat_hundredths: row.fat_hundredths === null ? null : Number(row.fat_hundredths),
  };
}

async function recordBodyEvent(trx: Kysely<Database>, userId: string, time: number, change: DataChange): Promise<void> {
  await recordEvent(trx, { type: 'body.updated', userId, data: { dates: [change.dateOf(time)] }, now: change.now }, change.coalesceSeconds);
}

export function createBodyWeightStore(db: Db): BodyWeightStore {
  const q = db.kysely;
  // Read by the weight list (GET /v1/users/me/body/weight/): compiled once, in the turn's reads.
  const measuredWithin = preparedRead<[string, number, number], WeightRow>(db, (k, userId, from, to) =>
    k.selectFrom('body_weights').select(COLUMNS).where('user_id', '=', userId).where('time', '>=', from).where('time', '<', to).orderBy('time'),
  );
  return {
    save: (userId, weight, change) =>
      // Under the person's lock like sleep: on SQLite the write lock is taken before the read.
      withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const before = await trx.selectFrom('body_weights').select('id_tag').where('user_id', '=', userId).where('time', '=', weight.time).executeTakeFirst();
        const row = { user_id: userId, time: weight.time, id_tag: before?.id_tag ?? newIdTag(), kg_hundredths: weight.kg_hundredths, fat_hundredths: weight.fat_hundredths };
        await trx
          .insertInto('body_weights')
          .values(row)
          .onConflict((oc) => oc.columns(['user_id', 'time']).doUpdateSet({ kg_hundredths: row.kg_hundredths, fat_hundredths: row.fat_hundredths }))
          .execute();
        await recordBodyEvent(trx, userId, weight.time, change);
        return weightOf(row);
      }),

    addNew: (userId, weights, step, dateOf) =>
      withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const times = weights.map((weight) => weight.time);
        const held = new Set<number>();
        for (let i = 0; i < times.length; i += 500) {
          const rows = await trx.selectFrom('body_weights').select('time').where('user_id', '=', userId).where('time', 'in', times.slice(i, i + 500)).execute();
          for (const row of rows) held.add(Number(row.time));
        }
        const fresh = weights.filter((weight) => !held.has(weight.time));
        if (fresh.length > 0) {
          await trx
            .insertInto('body_weights')
            .values(fresh.map((weight) => ({ user_id: userId, time: weight.time, id_tag: newIdTag(), kg_hundredths: weight.kg_hundredths, fat_hundredths: weight.fat_hundredths })))
            .execute();
        }
        const outcome: StepOutcome = { written: fresh.length, kept: weights.length - fresh.length, changes: {} };
        if (fresh.length > 0) outcome.changes['body.updated'] = { dates: [...new Set(fresh.map((weight) => dateOf(weight.time)))].sort() };
        await noteImportStep(trx, step, outcome);
        return outcome;
      }),

    async within(userId, from, to) {
      const rows = await measuredWithin(userId, from, to);
      return rows.map(weightOf);
    },

    async remove(userId, id, change) {
      const key = parseRecordId('wgt', id);
      if (key === null) return null;
      return withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const row = await trx
          .deleteFrom('body_weights')
          .where('user_id', '=', userId)
          .where('time', '=', key.time)
          .where('id_tag', '=', key.tag)
          .returning(COLUMNS)
          .executeTakeFirst();
        if (!row) return null;
        await recordBodyEvent(trx, userId, key.time, change);
        return weightOf(row);
      });
    },

    async weightsAfter(userId, afterTime, limit) {
      const rows = await q
        .selectFrom('body_weights')
        .select(COLUMNS)
        .where('user_id', '=', userId)
        .where('time', '>', afterTime)
        .orderBy('time')
        .limit(limit)
        .execute();
      return rows.map(weightOf);
    },
  };
}
