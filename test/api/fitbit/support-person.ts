/** A made-up person's days of data of every kind written for a real account, as `stride demo` writes them. */
import { minutesOfReadings } from '../../../src/domain/heart-rate-readings.js';
import { writePersonData } from '../../../src/domain/person-data.js';
import { LIVES, synthesizePerson, type LifeName } from '../../../src/domain/synthetic-person.js';
import type { TestApp } from '../../support/app.js';

export async function writeLife(t: TestApp, userId: string, life: LifeName, days: number): Promise<void> {
  const person = synthesizePerson(LIVES[life], t.clock(), days, 7);
  await t.database.stores.users.updateProfile(userId, { timezone: LIVES[life].timezone }, t.clock());
  const records = { steps: person.steps, calories: person.calories, heartrate: minutesOfReadings(person.heartrate), sleep: person.sleep, weight: person.weight };
  await writePersonData(t.database.stores, { id: userId, timezone: LIVES[life].timezone }, records, t.clock(), 0);
}
