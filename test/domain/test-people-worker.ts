/**
 * A second process for the test-people cap test (test-people.test.ts): opens the database named on
 * the command line, prints `ready`, and on a line from stdin adds test people for the owner `count`
 * times at once, then prints, as one line of JSON, each add's people's ids or its error's message.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { openDatabase } from '../../src/db/database.js';
import { addTestPeople } from '../../src/domain/test-people.js';
import { createStores } from '../../src/store/stores.js';

const [url, ownerId, now, count, days] = process.argv.slice(2);
const db = openDatabase(url!);
const stores = createStores(db);
const owner = await stores.users.findById(ownerId!);
if (!owner) throw new Error(`no user ${ownerId}`);
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await once(lines, 'line');
const settings = { days: Number(days), coalesceSeconds: 0 };
const outcomes = await Promise.allSettled(Array.from({ length: Number(count) }, () => addTestPeople(stores, owner, Number(now), settings)));
process.stdout.write(`${JSON.stringify(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? { ids: outcome.value.map((person) => person.id) } : { error: (outcome.reason as Error).message })))}\n`);
lines.close();
await db.close();
