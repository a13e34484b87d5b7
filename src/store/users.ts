import type { Insertable, Kysely, Selectable } from 'kysely';
import { preparedRead } from '../db/prepared-reads.js';
import type { Db } from '../db/database.js';
import type { Database, UserTable } from '../db/schema.js';
import { createProfileUpdate, type ProfileUpdate } from './profiles.js';
import { deleteGrants } from './grants.js';

/** A user as the rest of Stride sees it (the replica's write position stays in store/). */
export type User = Omit<Selectable<UserTable>, 'steps_written_lsn'>;
export type NewUser = Insertable<UserTable>;

type Q = Kysely<Database>;

async function insertUser(db: Q, user: NewUser): Promise<void> {
  await db.insertInto('users').values(user).execute();
}


export interface UserStore {
  findById(id: string): Promise<User | undefined>;
  /** By email, compared in lower case (as stored). */
  findByEmail(email: string): Promise<User | undefined>;
  insert(user: NewUser): Promise<void>;
  /**
   * Applies a profile change and returns the profile after it (undefined: no such user), with its
   * profile.updated event in the same transaction. The one way a profile changes — the API, the
   * account page — so no change goes unheard by the apps (store/profiles.ts).
   */
  updateProfile: ProfileUpdate;
  /** A new password hash; every session of the user but `keepSession` (when given) ends with it. */
  changePassword(id: string, passwordHash: string, keepSession: string | null, now: number): Promise<void>;
  /**
   * Deletes the user and everything kept about them — profile, data of every kind, sessions, codes, tokens,
   * their test people with all of theirs — in one transaction; each app they (or their test people) had
   * connected hears of it (grant.revoked, `account_deleted`). Apps the user registered go too: callers
   * make sure there are none (docs/web.md).
   */
  deleteAccount(id: string, now: number): Promise<void>;
  /** How many apps the user registered as a developer. */
  countOwnedApps(id: string): Promise<number>;
}

export function createUserStore(db: Db): UserStore {
  const q = db.kysely;
  // With the other reads of the turn (db/prepared-reads.ts): every page of a sign-in reads a user.
  const byId = preparedRead<[string], User>(db, (k, id) => k.selectFrom('users').selectAll().where('id', '=', id));
  const byEmail = preparedRead<[string], User>(db, (k, email) => k.selectFrom('users').selectAll().where('email', '=', email));
  return {
    findById: async (id) => (await byId(id))[0],
    findByEmail: async (email) => (await byEmail(email.toLowerCase()))[0],
    insert: (user) => insertUser(q, user),
    updateProfile: createProfileUpdate(db),
    changePassword: (id, passwordHash, keepSession, now) =>
      q.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).execute();
        let sessions = trx.deleteFrom('sessions').where('user_id', '=', id);
        if (keepSession !== null) sessions = sessions.where('id_hash', '!=', keepSession);
        await sessions.execute();
      }),
    deleteAccount: (id, now) =>
      q.transaction().execute(async (trx) => {
        const testPeople = await trx.selectFrom('users').select('id').where('test_person_owner_id', '=', id).execute();
        for (const person of [...testPeople.map((row) => row.id), id]) {
          await deleteGrants(trx, { userId: person }, { reason: 'account_deleted', now });
          // Each app's messages and feed events about the person's data went with its grant; the
          // rest goes with the user row (foreign keys on delete cascade). What stays is each
          // app's grant.created and grant.revoked (reason account_deleted), naming the person by id.
          await trx.deleteFrom('users').where('id', '=', person).execute();
        }
      }),
    async countOwnedApps(id) {
      const row = await q.selectFrom('apps').select((eb) => eb.fn.countAll<number>().as('n')).where('owner_id', '=', id).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
