import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Db } from '../db/database.js';
import type { Database, UserTable } from '../db/schema.js';
import { createProfileUpdate, type ProfileUpdate } from './profiles.js';

/** A user as the rest of Stride sees it (the replica's write position stays in store/). */
export type User = Omit<Selectable<UserTable>, 'steps_written_lsn'>;
export type NewUser = Insertable<UserTable>;
export type UserUpdate = Updateable<Omit<UserTable, 'id' | 'created_at'>>;

type Q = Kysely<Database>;

async function insertUser(db: Q, user: NewUser): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

const selectUserById = preparedQuery((db: Q, id: string) => db.selectFrom('users').selectAll().where('id', '=', id));
const selectUserByEmail = preparedQuery((db: Q, email: string) => db.selectFrom('users').selectAll().where('email', '=', email));

async function findUserById(db: Q, id: string): Promise<User | undefined> {
  return (await selectUserById(db, id)).rows[0];
}

async function findUserByEmail(db: Q, email: string): Promise<User | undefined> {
  return (await selectUserByEmail(db, email.toLowerCase())).rows[0];
}

async function updateUser(db: Q, id: string, changes: UserUpdate): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

export interface UserStore {
  findById(id: string): Promise<User | undefined>;
  /** By email, compared in lower case (as stored). */
  findByEmail(email: string): Promise<User | undefined>;
  insert(user: NewUser): Promise<void>;
  update(id: string, changes: UserUpdate): Promise<void>;
  /** Applies a profile change and returns the profile after it (undefined: no such user). */
  updateProfile: ProfileUpdate;
}

export function createUserStore(db: Db): UserStore {
  const q = db.kysely;
  return {
    findById: (id) => findUserById(q, id),
    findByEmail: (email) => findUserByEmail(q, email),
    insert: (user) => insertUser(q, user),
    update: (id, changes) => updateUser(q, id, changes),
    updateProfile: createProfileUpdate(db),
  };
}
