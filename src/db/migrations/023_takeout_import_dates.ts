/**
 * The changes an import's steps wait to tell, one small row per import and local date, instead of
 * a row per step and event type holding the step's change as JSON (migration 020). A year of steps
 * left about 2,600 such rows, some 430 KB, deleted when the import ended: on SQLite the file kept
 * them as free pages (docs/lab-notes/2026-11-29-takeout-bytes.md). A date's row holds a bit per
 * event type that changed something on it and, per type, the range covering those changes; a step
 * touching the date again widens it in place. So what waits grows with the dates, not the steps.
 *
 * An import under way during the upgrade keeps what it had noted: its rows of
 * `takeout_import_changes` are joined into rows here, and that table is dropped.
 */
import { SqliteAdapter, sql, type Kysely } from 'kysely';

/** The bits and range columns of each event type, as the store reads them (store/takeout-imports.ts). */
const TYPES: Record<string, { bit: number; prefix: string | null }> = {
  'steps.updated': { bit: 1, prefix: 'steps' },
  'distance.updated': { bit: 2, prefix: 'distance' },
  'calories.updated': { bit: 4, prefix: 'calories' },
  'heartrate.updated': { bit: 8, prefix: 'heartrate' },
  'sleep.updated': { bit: 16, prefix: 'sleep' },
  'body.updated': { bit: 32, prefix: null },
};
const PREFIXES = ['steps', 'distance', 'calories', 'heartrate', 'sleep'];

interface NotedChange {
  dates: string[];
  ranges?: Array<{ start_time: number; end_time: number }>;
}

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  let table = db.schema
    .createTable('takeout_import_dates')
    .addColumn('import_id', 'text', (c) => c.notNull().references('takeout_imports.id').onDelete('cascade'))
    // The person's local date, in days since 1970-01-01.
    .addColumn('day', 'integer', (c) => c.notNull())
    // A bit per event type that changed something on the date.
    .addColumn('types', 'integer', (c) => c.notNull());
  // Per type with ranges, [start, end) in Unix seconds covering its changes on the date.
  for (const prefix of PREFIXES) table = table.addColumn(`${prefix}_start`, 'bigint').addColumn(`${prefix}_end`, 'bigint');
  table = table.addPrimaryKeyConstraint('takeout_import_dates_pk', ['import_id', 'day']);
  // On SQLite the rows live in the key's own B-tree: no table beside an index.
  await (sqlite ? table.modifyEnd(sql`without rowid`) : table).execute();

  const noted = (await db.selectFrom('takeout_import_changes').select(['import_id', 'event_type', 'change']).orderBy('seq').execute()) as Array<{
    import_id: string;
    event_type: string;
    change: string;
  }>;
  const rows = new Map<string, Record<string, string | number | null>>();
  for (const { import_id, event_type, change } of noted) {
    const type = TYPES[event_type];
    if (type === undefined) continue;
    const { dates, ranges } = JSON.parse(change) as NotedChange;
    // Steps noted one range per date; a change without them tells its dates alone.
    const paired = ranges !== undefined && ranges.length === dates.length;
    dates.forEach((date, i) => {
      const day = Date.parse(`${date}T00:00:00Z`) / 86_400_000;
      const key = `${import_id} ${day}`;
      let row = rows.get(key);
      if (row === undefined) {
        row = { import_id, day, types: 0 };
        for (const prefix of PREFIXES) Object.assign(row, { [`${prefix}_start`]: null, [`${prefix}_end`]: null });
        rows.set(key, row);
      }
      row.types = Number(row.types) | type.bit;
      if (type.prefix === null || !paired) return;
      const [start, end] = [`${type.prefix}_start`, `${type.prefix}_end`];
      row[start] = row[start] === null ? ranges[i]!.start_time : Math.min(Number(row[start]), ranges[i]!.start_time);
      row[end] = row[end] === null ? ranges[i]!.end_time : Math.max(Number(row[end]), ranges[i]!.end_time);
    });
  }
  const all = [...rows.values()];
  // 13 parameters a row: well under either database's limit per statement.
  for (let i = 0; i < all.length; i += 500) await db.insertInto('takeout_import_dates').values(all.slice(i, i + 500)).execute();
  await db.schema.dropTable('takeout_import_changes').execute();
}
