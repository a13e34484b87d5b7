/**
 * The series store (docs/decisions/0013-series-store.md): one row per person × metric × UTC day, its
 * minutes packed (db/codec/minute-values.ts). Existing minute steps (step_samples) are packed into it, a
 * page of rows at a time so that a large database is never held in memory whole, and the
 * per-minute tables (step_samples and their rollups) go.
 */
import { SqliteAdapter, sql, type Kysely } from 'kysely';
import { dayStartOf } from '../codec/day.js';
import { emptyDay, hourSums, packHours, packRuns, type DayMinutes } from '../codec/minute-values.js';

/** Minute rows read per page of the conversion. */
const PAGE = 20_000;
/** Day rows per INSERT: 6 parameters each. */
const INSERT_CHUNK = 500;

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('series_days')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // 'steps'; later the other minute metrics.
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('day_start', 'bigint', (c) => c.notNull())
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('hours', sqlite ? 'blob' : 'bytea', (c) => c.notNull())
    .addColumn('minutes', sqlite ? 'blob' : 'bytea', (c) => c.notNull())
    // Not WITHOUT ROWID on SQLite, unlike the tables of 001: a row of that kind keeps at most
    // about 1,000 bytes in its page and spills the rest of a day's minutes into an overflow page
    // of its own, 4,700 bytes a person-day instead of about 1,700 (docs/performance.md).
    .addPrimaryKeyConstraint('series_days_pk', ['user_id', 'metric', 'day_start'])
    .execute();
  await convertStepSamples(db);
  await db.schema.dropTable('step_rollups').execute();
  await db.schema.dropTable('step_samples').execute();
}

async function convertStepSamples(db: Kysely<any>): Promise<void> {
  let pending: Array<Record<string, unknown>> = [];
  const flush = async () => {
    for (let i = 0; i < pending.length; i += INSERT_CHUNK) await db.insertInto('series_days').values(pending.slice(i, i + INSERT_CHUNK)).execute();
    pending = [];
  };
  let user: string | null = null;
  let dayStart = 0;
  let day: DayMinutes = emptyDay();
  const closeDay = () => {
    if (user !== null) pending.push({ user_id: user, metric: 'steps', day_start: dayStart, ...packLegacyDay(day) });
  };
  let after: { user: string; minute: number } | null = null;
  for (;;) {
    let page = db.selectFrom('step_samples').select(['user_id', 'minute_start', 'value']);
    // A row-value comparison, which both databases answer by a range of the primary key (an OR of
    // the two conditions would make PostgreSQL scan the table again for every page).
    if (after) page = page.where(sql<boolean>`(user_id, minute_start) > (${after.user}, ${after.minute})`);
    const rows = await page.orderBy('user_id').orderBy('minute_start').limit(PAGE).execute();
    for (const row of rows) {
      const minute = Number(row.minute_start);
      const rowDay = dayStartOf(minute);
      if (row.user_id !== user || rowDay !== dayStart) {
        closeDay();
        user = row.user_id as string;
        dayStart = rowDay;
        day = emptyDay();
      }
      day[Math.floor((minute - rowDay) / 60)] = Number(row.value);
    }
    if (pending.length >= INSERT_CHUNK) await flush();
    if (rows.length < PAGE) break;
    const last = rows[rows.length - 1]!;
    after = { user: last.user_id as string, minute: Number(last.minute_start) };
  }
  closeDay();
  await flush();
}

/** A day as 007 packed it: the runs of its minutes with no format byte (009 adds it). */
function packLegacyDay(day: DayMinutes) {
  const hours = hourSums(day);
  return { total: hours.reduce((a, b) => a + b, 0), hours: packHours(hours), minutes: packRuns(day) };
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('series_days').ifExists().execute();
}
