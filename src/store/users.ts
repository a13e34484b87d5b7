import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, UserTable } from '../db/schema.js';

export type User = Selectable<UserTable>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<Omit<UserTable, 'id' | 'created_at'>>;

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

type Q = Kysely<Database>;

export async function insertUser(db: Q, user: NewUser): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

const selectUserById = preparedQuery((db: Q, id: string) => db.selectFrom('users').selectAll().where('id', '=', id));
const selectUserByEmail = preparedQuery((db: Q, email: string) => db.selectFrom('users').selectAll().where('email', '=', email));

export async function findUserById(db: Q, id: string): Promise<User | undefined> {
  return (await selectUserById(db, id)).rows[0];
}

export async function findUserByEmail(db: Q, email: string): Promise<User | undefined> {
  return (await selectUserByEmail(db, email.toLowerCase())).rows[0];
}

export async function updateUser(db: Q, id: string, changes: UserUpdate): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}
