/**
 * What heart-rate zones are counted from (docs/api.md, "Heart-rate zones and active minutes"): a
 * person's year of birth and the maximum heart rate they set, both optional. Without either,
 * zones are not counted.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('birth_year', 'integer').execute();
  await db.schema.alterTable('users').addColumn('max_heart_rate', 'integer').execute();
}
