/**
 * The profile change of `PUT /v1/users/me` as ONE statement prepared once, returning the profile
 * as it is after the change (reading it comes with the bearer check: store/bearer-lookup.ts).
 * Fields absent from the change keep their value; `stride_length_cm` may be set to null, so it has
 * its own "is it changed" flag.
 */
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.js';
import { numberedPlaceholders } from './placeholders.js';

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

export type ProfileUpdate = (userId: string, changes: ProfileChanges, now: number) => Profile | undefined | Promise<Profile | undefined>;

/** Returns the profile's fields under their own names: the row is the Profile. */
const UPDATE_SQL = `update users set
  display_name = coalesce(?, display_name),
  timezone = coalesce(?, timezone),
  daily_step_goal = coalesce(?, daily_step_goal),
  stride_length_cm = case when ? = 1 then ? else stride_length_cm end,
  updated_at = ?
where id = ?
returning id, display_name, timezone, daily_step_goal, stride_length_cm, created_at`;

function valuesOf(userId: string, changes: ProfileChanges, now: number): unknown[] {
  const strideChanged = changes.stride_length_cm !== undefined;
  return [
    changes.display_name ?? null,
    changes.timezone ?? null,
    changes.daily_step_goal ?? null,
    strideChanged ? 1 : 0,
    strideChanged ? changes.stride_length_cm : null,
    now,
    userId,
  ];
}

/** Applies a profile change and returns the profile after it (undefined: no such user). */
export function createProfileUpdate(db: Db): ProfileUpdate {
  if (db.dialect === 'sqlite') {
    const { sqlite } = db;
    let update: Statement<unknown[], Profile> | undefined;
    return (userId, changes, now) => {
      update ??= sqlite.prepare<unknown[], Profile>(UPDATE_SQL);
      return update.get(...valuesOf(userId, changes, now));
    };
  }
  const { pool } = db;
  const text = numberedPlaceholders(UPDATE_SQL);
  return async (userId, changes, now) => {
    const result = await pool.query<Profile>({ name: 'stride_profile_update', text, values: valuesOf(userId, changes, now) });
    return result.rows[0];
  };
}
