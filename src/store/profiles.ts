/**
 * Every change of a person's profile — `PUT /v1/users/me`, the account page — with its
 * profile.updated event in the same transaction (docs/webhooks.md, a transactional outbox): the
 * event comes from here, never from a caller, so no way of changing a profile can forget it.
 * Reading the profile comes with the bearer check (store/bearer-lookup.ts).
 */
import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../db/database.js';
import { strideOf } from '../db/derived-distance.js';
import type { Database } from '../db/schema.js';
import { restrideDistance, strideLengthOf } from './distance-days.js';
import { mergeRanges, recordEvent, type MinuteRange } from './events.js';
import { withOwnerLocked } from './owner-lock.js';

/** The user resource an app sees (docs/api.md): the public part of the user row. */
export interface Profile {
  id: string;
  display_name: string;
  timezone: string;
  daily_step_goal: number;
  stride_length_cm: number | null;
  created_at: number;
}

/** The fields of the profile a change may set; checked by src/domain/profile.ts. */
export type ProfileChanges = Partial<Pick<Profile, 'display_name' | 'timezone' | 'daily_step_goal' | 'stride_length_cm'>>;

export type ProfileUpdate = (userId: string, changes: ProfileChanges, now: number) => Promise<Profile | undefined>;

/**
 * Applies a profile change (absent fields keep their value) and returns the profile after it
 * (undefined: no such user). A change of the stride length rewrites the sums of the distance the
 * user's steps derive (store/distance-days.ts) in the same transaction, under the user's lock like
 * every write of steps and distance.
 */
export function createProfileUpdate(db: Db): ProfileUpdate {
  return (userId, changes, now) => {
    if (changes.stride_length_cm === undefined) return db.kysely.transaction().execute((trx) => update(trx, userId, changes, now));
    return withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
      const strideBefore = await strideLengthOf(trx, userId);
      const profile = await update(trx, userId, changes, now);
      if (profile && strideOf(profile.stride_length_cm === null ? null : Number(profile.stride_length_cm)) !== strideBefore) {
        // Every day of steps now derives another distance: the apps reading it hear so (SPEC §7).
        const days = await restrideDistance(trx, userId);
        if (days.length > 0) await recordEvent(trx, { type: 'distance.updated', userId, data: distanceChangeOf(days, profile.timezone), now }, 0);
      }
      return profile;
    });
  };
}

/** A data event's `ranges` and `dates` (docs/webhooks.md) for whole UTC days, dates in the person's zone. */
function distanceChangeOf(dayStarts: readonly number[], zone: string): { ranges: MinuteRange[]; dates: string[] } {
  const dates = new Set<string>();
  for (const day of dayStarts) {
    dates.add(DateTime.fromSeconds(day, { zone }).toISODate()!);
    dates.add(DateTime.fromSeconds(day + 86_399, { zone }).toISODate()!);
  }
  return { ranges: mergeRanges(dayStarts.map((day) => ({ start_time: day, end_time: day + 86_400 }))), dates: [...dates].sort() };
}

async function update(trx: Kysely<Database>, userId: string, changes: ProfileChanges, now: number): Promise<Profile | undefined> {
  const fields = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  const profile = await trx
    .updateTable('users')
    .set({ ...fields, updated_at: now })
    .where('id', '=', userId)
    .returning(['id', 'display_name', 'timezone', 'daily_step_goal', 'stride_length_cm', 'created_at'])
    .executeTakeFirst();
  if (profile) {
    const event = { type: 'profile.updated', userId, data: { fields: Object.keys(fields).sort() }, now } as const;
    await recordEvent(trx, event, 0);
  }
  return profile;
}
