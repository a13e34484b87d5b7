/**
 * Every change of a person's profile — `PUT /v1/users/me`, the account page — with its
 * profile.updated event in the same transaction (docs/webhooks.md, a transactional outbox): the
 * event comes from here, never from a caller, so no way of changing a profile can forget it.
 * Reading the profile comes with the bearer check (store/bearer-lookup.ts).
 */
import type { Db } from '../db/database.js';
import { recordEvent } from './events.js';

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

/** Applies a profile change (absent fields keep their value) and returns the profile after it (undefined: no such user). */
export function createProfileUpdate(db: Db): ProfileUpdate {
  return (userId, changes, now) =>
    db.kysely.transaction().execute(async (trx) => {
      const fields = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
      const profile = await trx
        .updateTable('users')
        .set({ ...fields, updated_at: now })
        .where('id', '=', userId)
        .returning(['id', 'display_name', 'timezone', 'daily_step_goal', 'stride_length_cm', 'created_at'])
        .executeTakeFirst();
      if (profile) {
        const event = { type: 'profile.updated', userId, audience: { scope: 'read_profile' }, data: { fields: Object.keys(fields).sort() }, now } as const;
        await recordEvent(trx, event, 0);
      }
      return profile;
    });
}
