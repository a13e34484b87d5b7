/**
 * A change of a person's stride length (docs/decisions/0031-stride-changes.md). Each distance row
 * holds the sums of the distance its day's steps derive with the stride in force when it was
 * written (store/distance-days.ts), so a new stride means recomputing every day with steps: work
 * that grows with the history. The change itself does one page of days, in the profile update's
 * transaction; the rest goes a page at a time, each page its own short transaction under the
 * person's lock (so reads and other writers wait milliseconds, never the whole history), carried
 * on by whichever process runs it — the one that answered, or any server's sweep after a restart.
 * When the last page is written, one `distance.updated` names the range of dates it covered.
 *
 * The stride length may change once a minute: each change costs a pass over the history.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { unpackMinutes } from '../db/codec/minute-values.js';
import { rewriteDistanceDays } from './distance-days.js';
import { recordEvent } from './events.js';
import { withOwnerLocked } from './owner-lock.js';

export const STRIDE_CHANGE_INTERVAL_SECONDS = 60;
/** Days with steps recomputed per transaction: about 10 ms of SQLite's writer. */
export const RESTRIDE_PAGE = 200;
/** Between two pages: time for the requests that queued behind one to run. */
const RESTRIDE_PAUSE_MS = 5;

/** A stride change sooner than STRIDE_CHANGE_INTERVAL_SECONDS after the last one. */
export class StrideChangeTooSoon extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`the stride length may change once a minute; try again in ${retryAfterSeconds} s`);
  }
}

/**
 * Inside the transaction that changes the stride length, under the person's lock: refuses a
 * change too soon after the last, else records it with its recomputation pending.
 */
export async function beginStrideChange(trx: Kysely<Database>, userId: string, now: number): Promise<void> {
  const last = await trx.selectFrom('stride_changes').select('changed_at').where('user_id', '=', userId).executeTakeFirst();
  const since = last ? now - Number(last.changed_at) : Infinity;
  if (since < STRIDE_CHANGE_INTERVAL_SECONDS) throw new StrideChangeTooSoon(STRIDE_CHANGE_INTERVAL_SECONDS - Math.max(0, since));
  const state = { changed_at: now, pending: 1, done_through: null };
  await trx
    .insertInto('stride_changes')
    .values({ user_id: userId, ...state })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(state))
    .execute();
}

/**
 * Recomputes the next page of the person's days with steps, under their lock (the caller's
 * transaction). Returns true when nothing is left; the page that ends the work tells the apps.
 */
export async function restridePage(trx: Kysely<Database>, userId: string, now: number): Promise<boolean> {
  const state = await trx.selectFrom('stride_changes').select(['pending', 'done_through']).where('user_id', '=', userId).executeTakeFirst();
  if (!state || Number(state.pending) === 0) return true;
  let page = trx.selectFrom('series_days').select(['day_start', 'minutes']).where('user_id', '=', userId).where('metric', '=', 'steps');
  if (state.done_through !== null) page = page.where('day_start', '>', Number(state.done_through));
  const rows = await page.orderBy('day_start').limit(RESTRIDE_PAGE).execute();
  await rewriteDistanceDays(
    trx,
    userId,
    'steps',
    rows.map((row) => {
      const steps = unpackMinutes(row.minutes);
      return { day: Number(row.day_start), before: steps, after: steps };
    }),
  );
  if (rows.length === RESTRIDE_PAGE) {
    await trx.updateTable('stride_changes').set({ done_through: Number(rows[rows.length - 1]!.day_start) }).where('user_id', '=', userId).execute();
    return false;
  }
  await trx.updateTable('stride_changes').set({ pending: 0, done_through: null }).where('user_id', '=', userId).execute();
  await tellDistanceRederived(trx, userId, now);
  return true;
}

/**
 * One `distance.updated` for the whole recomputation: one range from the first to the end of the
 * last UTC day with steps, and the local dates it starts and ends on — a few hundred bytes, however
 * long the history (docs/webhooks.md).
 */
async function tellDistanceRederived(trx: Kysely<Database>, userId: string, now: number): Promise<void> {
  const span = await trx
    .selectFrom('series_days')
    .select((eb) => [eb.fn.min('day_start').as('first'), eb.fn.max('day_start').as('last')])
    .where('user_id', '=', userId)
    .where('metric', '=', 'steps')
    .executeTakeFirst();
  const user = await trx.selectFrom('users').select('timezone').where('id', '=', userId).executeTakeFirst();
  if (!span || span.first === null || span.last === null || !user) return;
  const range = { start_time: Number(span.first), end_time: Number(span.last) + 86_400 };
  const localDate = (t: number) => DateTime.fromSeconds(t, { zone: user.timezone }).toISODate()!;
  const data = { ranges: [range], start_date: localDate(range.start_time), end_date: localDate(range.end_time - 1), cause: 'stride_length' };
  await recordEvent(trx, { type: 'distance.updated', userId, data, now }, 0);
}

/**
 * Carries on the recomputations still pending (`userId`: only that person's), a page per
 * transaction with a pause between pages; `now` dates the event that ends each. Safe to run from several processes at once: each page
 * reads how far the work has come under the person's lock.
 */
export async function runPendingRestrides(db: Db, now: number, userId?: string): Promise<void> {
  let query = db.kysely.selectFrom('stride_changes').select('user_id').where('pending', '=', 1);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  for (const { user_id } of await query.execute()) {
    while (!(await withOwnerLocked(db, { table: 'users', id: user_id }, (trx) => restridePage(trx, user_id, now)))) await sleep(RESTRIDE_PAUSE_MS);
  }
}
