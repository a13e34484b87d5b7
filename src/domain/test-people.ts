/**
 * The sandbox (docs/web.md, "Test people"; docs/decisions/0024-test-people.md): test people a
 * developer owns, each living one of the made-up lives of synthetic-person.ts, and what can happen
 * to them — a sync of the data since the last one, a late sync of a past day, an app revoked, a
 * new time zone. Each change goes through the store calls the API and the account page use, so
 * that it makes exactly the events a real person's same action makes.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { ApiError, invalidRequest } from '../errors.js';
import type { App } from '../store/apps.js';
import type { Stores } from '../store/stores.js';
import type { NewTestPerson, TestPerson } from '../store/test-people.js';
import type { User } from '../store/users.js';
import { minutesOfReadings } from './heart-rate-readings.js';
import { writePersonData, type PersonRecords, type WrittenCounts } from './person-data.js';
import { canonicalTimeZone } from './profile-time-zone.js';
import { overlapsStored } from './sleep-overlap.js';
import { isLifeName, LIVES, seededRandom, synthesizeDates, type Life, type LifeName, type PersonData } from './synthetic-person.js';

/**
 * A test person's password hash: not an Argon2 PHC string, so no password verifies against it.
 * Sign-in refuses test people before any check anyway (isTestPerson).
 */
export const TEST_PERSON_PASSWORD_HASH = '!test-person: no password';

/** Test people's emails end so: `.invalid` is reserved (RFC 2606 §2), so no real address is taken. */
export const TEST_PEOPLE_EMAIL_DOMAIN = 'test-people.invalid';

/** How each life is named on the dashboard and in `stride sandbox list`. */
export const LIFE_NAMES: Record<LifeName, { title: string; place: string }> = {
  office_worker: { title: 'office worker', place: 'Berlin' },
  runner: { title: 'runner', place: 'New York' },
  night_shift_worker: { title: 'night-shift worker', place: 'Kolkata, sleeps by day' },
  traveller: { title: 'traveller', place: 'New York, then Tokyo' },
};

/** Test people one developer can have: each is 90 days of data, so adding them is not free. */
export const MAX_TEST_PEOPLE = 20;

/** Days before a sync that a late sync adds to (apps must handle changes to past days). */
export const LATE_SYNC_DAYS_AGO = 3;

export interface SandboxSettings {
  /** Days of data a new test person gets. */
  days: number;
  /** WEBHOOK_COALESCE, as the API's uploads use it. */
  coalesceSeconds: number;
}

export function isTestPerson(user: Pick<User, 'test_person_owner_id'>): boolean {
  return user.test_person_owner_id !== null;
}

const minuteFloor = (time: number) => time - (time % 60);
const dateIn = (time: number, zone: string) => DateTime.fromSeconds(time, { zone }).toISODate()!;
const plusDays = (date: string, days: number) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
const daysBetween = (from: string, to: string) => Math.round(DateTime.fromISO(to, { zone: 'UTC' }).diff(DateTime.fromISO(from, { zone: 'UTC' }), 'days').days);

/** The zone a life is lived in on day `index` of its range. */
function zoneOnDay(life: Life, index: number): string {
  return life.move && index >= life.move.day ? life.move.timezone : life.timezone;
}

/** The records of `data` from `from` (inclusive) to `to` (exclusive); a night counts when it ends. */
export function recordsBetween(data: PersonData, from: number, to: number): PersonData {
  return {
    steps: slice(data.steps, (sample) => sample.start_time, from, to),
    calories: slice(data.calories, (sample) => sample.start_time, from, to),
    heartrate: slice(data.heartrate, (reading) => reading.time, from, to),
    sleep: data.sleep.filter((session) => session.end_time > from && session.end_time <= to),
    weight: slice(data.weight, (weight) => weight.time, from, to),
  };
}

/** The records of time-ordered `records` whose time is in [from, to): found by bisection, 90 days of minutes being 130,000 of them. */
function slice<T>(records: readonly T[], timeOf: (record: T) => number, from: number, to: number): T[] {
  for (let i = 1; i < records.length; i++) {
    if (timeOf(records[i]!) < timeOf(records[i - 1]!)) return records.filter((record) => timeOf(record) >= from && timeOf(record) < to);
  }
  const firstAtOrAfter = (time: number) => {
    let low = 0;
    let high = records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (timeOf(records[middle]!) < time) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  return records.slice(firstAtOrAfter(from), firstAtOrAfter(to));
}

/** Writes made-up data as the API's uploads of it would be written, each with its event. */
async function writeData(stores: Stores, person: Pick<TestPerson, 'id' | 'timezone'>, data: Partial<PersonData>, now: number, coalesceSeconds: number): Promise<WrittenCounts> {
  const records: PersonRecords = {};
  if (data.steps?.length) records.steps = data.steps;
  if (data.calories?.length) records.calories = data.calories;
  if (data.heartrate?.length) records.heartrate = minutesOfReadings(data.heartrate);
  if (data.sleep?.length) records.sleep = await withoutStoredOverlaps(stores, person.id, data.sleep);
  if (data.weight?.length) records.weight = data.weight;
  return writePersonData(stores, { id: person.id, timezone: person.timezone }, records, now, coalesceSeconds);
}

/**
 * Nights that overlap none the person has stored with another start (after a change of zone the
 * made-up nights move): the API would refuse them with 409, so the sandbox leaves them out.
 */
async function withoutStoredOverlaps(stores: Stores, userId: string, nights: PersonData['sleep']): Promise<PersonData['sleep']> {
  const from = Math.min(...nights.map((night) => night.start_time)) - 86_400;
  const to = Math.max(...nights.map((night) => night.end_time)) + 86_400 + 1;
  const stored = await stores.sleep.endingWithin(userId, from, to);
  return nights.filter((night) => !stored.some((s) => overlapsStored(night, s)));
}

/**
 * Makes one test person of each life for `owner`, each with `settings.days` days of data of every
 * kind up to now. The four accounts are counted against MAX_TEST_PEOPLE and added in one
 * transaction under the owner's lock (store/test-people.ts), so adds sent at once never pass the
 * cap; their data is written after it, outside the lock. A person whose data could not be written
 * is deleted again, with those of this add not written yet: nothing half-made.
 */
export async function addTestPeople(stores: Stores, owner: User, now: number, settings: SandboxSettings, batch?: string): Promise<TestPerson[]> {
  if (isTestPerson(owner)) throw invalidRequest(`${owner.email} is a test person; only a developer's own account can have test people`);
  const lives = Object.keys(LIVES) as LifeName[];
  const until = minuteFloor(now);
  // The same batch sent again (a double click, a reload) made its people already, by these emails: they are the answer.
  const planned = lives.map((life) => {
    const id = randomUUID();
    return newTestPerson(owner, { id, email: `${life.replaceAll('_', '-')}-${batch ?? id.slice(0, 8)}@${TEST_PEOPLE_EMAIL_DOMAIN}`, lifeName: life }, until, settings);
  });
  const outcome = await stores.testPeople.addUpTo(owner.id, planned, MAX_TEST_PEOPLE);
  if ('full' in outcome) {
    throw new ApiError('conflict', `${owner.email} has ${outcome.full} test people already; a developer can have at most ${MAX_TEST_PEOPLE}`);
  }
  for (const [i, person] of outcome.made.entries()) {
    try {
      const data = synthesizeDates(LIVES[person.life as LifeName], { firstDate: person.firstDate, days: settings.days }, person.seed);
      await writeData(stores, person, recordsBetween(data, -Infinity, until), until, settings.coalesceSeconds);
    } catch (error) {
      for (const unwritten of outcome.made.slice(i)) await stores.users.deleteAccount(unwritten.id, until);
      throw error;
    }
  }
  const made = [...outcome.before, ...outcome.made];
  return planned.flatMap((one) => made.filter((person) => person.email === one.user.email));
}

/** A test person of `lifeName` as the store adds them: their account, flagged as the owner's, and their life. */
function newTestPerson(owner: User, made: { id: string; email: string; lifeName: LifeName }, now: number, settings: SandboxSettings): NewTestPerson {
  const { id, email, lifeName } = made;
  const life = LIVES[lifeName];
  const timezone = zoneOnDay(life, settings.days - 1);
  const { title, place } = LIFE_NAMES[lifeName];
  return {
    user: { id, email, password_hash: TEST_PERSON_PASSWORD_HASH, display_name: `Test ${title} (${place})`, timezone, stride_length_cm: null, created_at: now, updated_at: now, test_person_owner_id: owner.id },
    life: lifeName,
    seed: randomInt(1, 2 ** 31),
    firstDate: plusDays(dateIn(now, timezone), -(settings.days - 1)),
    syncedUntil: now,
  };
}

/** The life a test person lives from now on: theirs, in the zone of their profile. */
function lifeNow(person: TestPerson): Life {
  if (!isLifeName(person.life)) throw new Error(`unknown life ${person.life}`);
  const life = LIVES[person.life];
  return { ...life, timezone: person.timezone, move: undefined };
}

/** The data a test person's sync at `now` adds: from their last sync, at most `maxDays` days back. */
export function syncData(person: TestPerson, now: number, maxDays: number): { from: number; to: number; data: PersonData } {
  const to = minuteFloor(now);
  const from = Math.max(person.syncedUntil, to - maxDays * 86_400);
  const life = lifeNow(person);
  // From the day before: that day's waking hours run until the night that the first day ends.
  const firstDate = plusDays(dateIn(from, life.timezone), -1);
  const days = daysBetween(firstDate, dateIn(to, life.timezone)) + 1;
  const data = to > from ? recordsBetween(synthesizeDates(life, { firstDate, days }, person.seed), from, to) : { steps: [], calories: [], heartrate: [], sleep: [], weight: [] };
  return { from: person.syncedUntil, to, data };
}

/**
 * "Sync now": the data since the person's last sync, written as their device's uploads would be,
 * with the events that go with them. Null when another sync of the same range ran meanwhile.
 */
export async function syncTestPerson(stores: Stores, person: TestPerson, now: number, settings: SandboxSettings): Promise<WrittenCounts | null> {
  const { from, to, data } = syncData(person, now, settings.days);
  if (to <= from) return {};
  if (!(await stores.testPeople.claimSync(person.id, from, to))) return null;
  try {
    return await writeData(stores, person, data, now, settings.coalesceSeconds);
  } catch (error) {
    await stores.testPeople.releaseSync(person.id, to, from);
    throw error;
  }
}

/**
 * "Late sync": a walk on the day LATE_SYNC_DAYS_AGO days back that the person's watch delivers
 * only now — steps, calories and heart rate for its minutes, replacing what those minutes held.
 */
/** The person's local date that a late sync at `now` adds a walk to. */
export function lateWalkDate(person: TestPerson, now: number): string {
  return plusDays(dateIn(now, person.timezone), -LATE_SYNC_DAYS_AGO);
}

export function lateWalk(person: TestPerson, now: number): PersonData {
  const random = seededRandom(person.seed ^ Math.floor(now / 60));
  const date = lateWalkDate(person, now);
  const start = minuteFloor(DateTime.fromISO(date, { zone: person.timezone }).plus({ minutes: Math.round((15 + random() * 2) * 60) }).toSeconds());
  const data: PersonData = { steps: [], calories: [], heartrate: [], sleep: [], weight: [] };
  const cadence = 100 + random() * 20;
  for (let minute = 0; minute < 40; minute++) {
    const t = start + minute * 60;
    const steps = Math.round(cadence + (random() - 0.5) * 20);
    data.steps.push({ start_time: t, value: steps });
    data.calories.push({ start_time: t, value: Math.round((1.2 + steps * 0.045) * 10) / 10 });
    data.heartrate.push({ time: t + Math.floor(random() * 60), bpm: Math.round(100 + (random() - 0.5) * 10) });
  }
  return data;
}

export async function lateSyncTestPerson(stores: Stores, person: TestPerson, now: number, settings: SandboxSettings): Promise<WrittenCounts> {
  return writeData(stores, person, lateWalk(person, now), now, settings.coalesceSeconds);
}

/** "Revoke app": as the person's own Revoke on their account page; false when the app had no grant. */
export function revokeTestPersonApp(stores: Stores, person: TestPerson, appId: string, now: number): Promise<boolean> {
  return stores.grants.revokeForUser(person.id, appId, now);
}

/** "Change time zone": as a profile change through the API or the account page, with its event. */
export async function changeTestPersonZone(stores: Stores, person: TestPerson, zoneName: string, now: number): Promise<string> {
  const timezone = canonicalTimeZone(zoneName.trim());
  if (timezone === null) throw invalidRequest(`timezone must be an IANA time zone name such as Europe/Berlin, got "${zoneName.slice(0, 64)}"`);
  if (timezone !== person.timezone) await stores.users.updateProfile(person.id, { timezone }, now);
  return timezone;
}

/**
 * Who consents on the consent page (docs/oauth.md, "Consenting as a test person"): the signed-in
 * person, or — for an app they own — one of their own test people. Null: the choice is refused.
 */
export async function consentingPerson(stores: Stores, signedIn: User, app: App, chosen: string | undefined): Promise<string | null> {
  if (chosen === undefined || chosen === '' || chosen === signedIn.id) return signedIn.id;
  if (app.ownerId !== signedIn.id) return null;
  return (await stores.testPeople.findOwned(signedIn.id, chosen))?.id ?? null;
}

/** The test people the consent page offers for `app`: the signer's own, for their own app only. */
export async function consentChoices(stores: Stores, signedIn: User, app: App): Promise<TestPerson[]> {
  return app.ownerId === signedIn.id ? stores.testPeople.listOf(signedIn.id) : [];
}

/** SANDBOX_LIVE: seconds between the steps of the sandbox clock. */
export const SANDBOX_STEP_SECONDS = 300;

/**
 * SANDBOX_LIVE: one step of the sandbox clock — every test person whose developer has an active
 * webhook endpoint is synced up to `now`. Returns how many were synced.
 */
export async function advanceLiveSandbox(stores: Stores, now: number, settings: SandboxSettings): Promise<number> {
  let synced = 0;
  for (const person of await stores.testPeople.listWithSubscribedOwner()) {
    if ((await syncTestPerson(stores, person, now, settings)) !== null) synced++;
  }
  return synced;
}

/** A test person of the developer, or the 404 every other id gets. */
export async function ownedTestPerson(stores: Stores, owner: User, id: string): Promise<TestPerson> {
  const person = await stores.testPeople.findOwned(owner.id, id);
  if (!person) throw new ApiError('not_found', 'no such test person among yours');
  return person;
}
