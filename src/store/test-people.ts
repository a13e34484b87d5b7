/**
 * Test people (docs/decisions/0024-test-people.md): accounts owned by a developer, flagged by
 * `users.test_person_owner_id`, with the state of their made-up life in `test_people`.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { isId } from './identifiers.js';
import { withOwnerLocked } from './owner-lock.js';
import type { NewUser } from './users.js';

type Q = Kysely<Database>;

/** A test person as the sandbox sees them. */
export interface TestPerson {
  id: string;
  ownerId: string;
  email: string;
  displayName: string;
  /** Their profile's zone now. */
  timezone: string;
  life: string;
  seed: number;
  /** ISO local date of their first day of data. */
  firstDate: string;
  /** Their data exists up to this time, exclusive. */
  syncedUntil: number;
  createdAt: number;
}

/** A new test person: their account (its `test_person_owner_id` set) and their life. */
export interface NewTestPerson {
  user: NewUser & { test_person_owner_id: string };
  life: string;
  seed: number;
  firstDate: string;
  syncedUntil: number;
}

/** What addUpTo did: added `made` (the owner had `before` of the people already), or nothing (`full`). */
export type AddUpToOutcome = { made: TestPerson[]; before: TestPerson[] } | { full: number };

export interface TestPeopleStore {
  /**
   * Adds those of `people` (each account with its life) whose email none of the owner's test people
   * has yet — the others were made by the same batch sent before, and come back as `before` — unless
   * the owner would then have more than `atMost`: then nothing is added, and `full` is how many the
   * owner has. Counted and inserted as one transaction under the owner's lock (owner-lock.ts), so
   * that adds at once, from one process or several, never pass the cap.
   */
  addUpTo(ownerId: string, people: readonly NewTestPerson[], atMost: number): Promise<AddUpToOutcome>;
  /** The developer's test people, oldest first. */
  listOf(ownerId: string): Promise<TestPerson[]>;
  /** The test person `id` if `ownerId` owns them; undefined for anyone else's, or no one's (or an id that cannot be one, identifiers.ts). */
  findOwned(ownerId: string, id: string): Promise<TestPerson | undefined>;
  /**
   * Moves the person's synced time from `from` to `to`, unless another sync moved it meanwhile
   * (false): the range between is this caller's to fill, and no two syncs fill the same range.
   */
  claimSync(id: string, from: number, to: number): Promise<boolean>;
  /** Gives a claimed range back (its write failed): the next sync makes it again. */
  releaseSync(id: string, claimedTo: number, from: number): Promise<void>;
  /** Test people whose developer has a verified, unpaused webhook endpoint (active or failing) on one of their apps. */
  listWithSubscribedOwner(): Promise<TestPerson[]>;
}

const columns = [
  'u.id',
  'u.test_person_owner_id',
  'u.email',
  'u.display_name',
  'u.timezone',
  't.life',
  't.seed',
  't.first_date',
  't.synced_until',
  't.created_at',
] as const;

function selectPeople(q: Q) {
  return q.selectFrom('test_people as t').innerJoin('users as u', 'u.id', 't.user_id').select(columns).orderBy('t.created_at').orderBy('u.email');
}

type Row = Awaited<ReturnType<ReturnType<typeof selectPeople>['execute']>>[number];

const personOf = (row: Row): TestPerson => ({
  id: row.id,
  ownerId: row.test_person_owner_id!,
  email: row.email,
  displayName: row.display_name,
  timezone: row.timezone,
  life: row.life,
  seed: Number(row.seed),
  firstDate: row.first_date,
  syncedUntil: Number(row.synced_until),
  createdAt: Number(row.created_at),
});

export function createTestPeopleStore(db: Db): TestPeopleStore {
  const q = db.kysely;
  return {
    addUpTo: (ownerId, people, atMost) =>
      withOwnerLocked(db, { table: 'users', id: ownerId }, async (trx) => {
        const mine = (await selectPeople(trx).where('u.test_person_owner_id', '=', ownerId).execute()).map(personOf);
        const emails = new Set(mine.map((person) => person.email));
        const before = mine.filter((person) => people.some((one) => one.user.email === person.email));
        const toAdd = people.filter((one) => !emails.has(one.user.email));
        if (toAdd.length === 0) return { made: [], before };
        if (mine.length + toAdd.length > atMost) return { full: mine.length };
        for (const person of toAdd) {
          if (person.user.test_person_owner_id !== ownerId) throw new Error(`test person ${person.user.id} is not of owner ${ownerId}`);
          await trx.insertInto('users').values(person.user).execute();
          await trx
            .insertInto('test_people')
            .values({ user_id: person.user.id, life: person.life, seed: person.seed, first_date: person.firstDate, synced_until: person.syncedUntil, created_at: person.user.created_at })
            .execute();
        }
        const ids = toAdd.map((person) => person.user.id);
        const added = (await selectPeople(trx).where('u.id', 'in', ids).execute()).map(personOf);
        // In the order they were given (the rows' order ties on created_at).
        return { made: ids.map((id) => added.find((person) => person.id === id)!), before };
      }),
    listOf: async (ownerId) => (await selectPeople(q).where('u.test_person_owner_id', '=', ownerId).execute()).map(personOf),
    findOwned: async (ownerId, id) => {
      if (!isId('user', id)) return undefined;
      const row = await selectPeople(q).where('u.id', '=', id).where('u.test_person_owner_id', '=', ownerId).executeTakeFirst();
      return row && personOf(row);
    },
    claimSync: async (id, from, to) => {
      const result = await q.updateTable('test_people').set({ synced_until: to }).where('user_id', '=', id).where('synced_until', '=', from).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    releaseSync: async (id, claimedTo, from) => {
      await q.updateTable('test_people').set({ synced_until: from }).where('user_id', '=', id).where('synced_until', '=', claimedTo).execute();
    },
    listWithSubscribedOwner: async () =>
      (
        await selectPeople(q)
          .where((eb) =>
            eb.exists(
              eb
                .selectFrom('apps as a')
                .innerJoin('webhook_endpoints as e', 'e.app_id', 'a.id')
                .select('e.id')
                .whereRef('a.owner_id', '=', 'u.test_person_owner_id')
                // Verified and not paused: an endpoint that is being sent events.
                .where('e.state', 'in', ['active', 'failing']),
            ),
          )
          .execute()
      ).map(personOf),
  };
}
