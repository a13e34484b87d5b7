/**
 * Every change of a person's profile — `PUT /v1/users/me`, the account page — with its
 * profile.updated event in the same transaction (docs/webhooks.md, a transactional outbox): the
 * event comes from here, never from a caller, so no way of changing a profile can forget it.
 * Reading the profile comes with the bearer check (store/bearer-lookup.ts).
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import { strideOf } from '../db/derived-distance.js';
import type { Database } from '../db/schema.js';
import { recordEvent } from './events.js';
import { withOwnerLocked } from './owner-lock.js';
import { beginStrideChange, restridePage, runPendingRestrides } from './stride-changes.js';

/** The user resource an app sees (docs/api.md): the public part of the user row. */
export interface Profile {
  id: string;
  display_name: string;
  timezone: string;
  daily_step_goal: number;
  stride_length_cm: number | null;
  /** What heart-rate zones are counted from, when set (domain/heart-rate-zones.ts). */
  birth_year: number | null;
  max_heart_rate: number | null;
  created_at: number;
}

/** The stride length in force: the profile's, or 75 cm (an adult's average step) when it has none. */
export const strideInForce = (strideLengthCm: number | null): number => strideOf(strideLengthCm);

/** The fields of the profile a change may set; checked by src/domain/profile.ts. */
export type ProfileChanges = Partial<Pick<Profile, 'display_name' | 'timezone' | 'daily_step_goal' | 'stride_length_cm' | 'birth_year' | 'max_heart_rate'>>;

export type ProfileUpdate = (userId: string, changes: ProfileChanges, now: number) => Promise<Profile | undefined>;

/**
 * Applies a profile change (absent fields keep their value) and returns the profile after it
 * (undefined: no such user). A change of the stride length, under the user's lock like every write
 * of steps and distance, is refused when it comes too soon after the last one
 * (StrideChangeTooSoon), and recomputes the distance the user's steps derive: the first page of
 * days here, the rest after the answer (store/stride-changes.ts).
 */
export function createProfileUpdate(db: Db): ProfileUpdate {
  return async (userId, changes, at) => {
    if (changes.stride_length_cm === undefined) return db.kysely.transaction().execute((trx) => update(trx, userId, changes, at));
    const { profile, pending } = await withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
      const before = await trx.selectFrom('users').select('stride_length_cm').where('id', '=', userId).executeTakeFirst();
      if (!before || strideOf(changes.stride_length_cm) === strideOf(before.stride_length_cm)) return { profile: await update(trx, userId, changes, at), pending: false };
      await beginStrideChange(trx, userId, at);
      const profile = await update(trx, userId, changes, at);
      return { profile, pending: !(await restridePage(trx, userId, at)) };
    });
    // After the answer. A run that fails stays pending: the server's sweep carries it on (src/server.ts).
    if (pending) void runPendingRestrides(db, at, userId).catch(() => undefined);
    return profile;
  };
}

async function update(trx: Kysely<Database>, userId: string, changes: ProfileChanges, now: number): Promise<Profile | undefined> {
  const fields = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  const profile = await trx
    .updateTable('users')
    .set({ ...fields, updated_at: now })
    .where('id', '=', userId)
    .returning(['id', 'display_name', 'timezone', 'daily_step_goal', 'stride_length_cm', 'birth_year', 'max_heart_rate', 'created_at'])
    .executeTakeFirst();
  if (profile) {
    const event = { type: 'profile.updated', userId, data: { fields: Object.keys(fields).sort() }, now } as const;
    await recordEvent(trx, event, 0);
  }
  return profile;
}
