/**
 * A second process for the rotation tests: opens the database named on the command line, prints
 * `ready`, reads one line of JSON rotations from stdin, runs them one after another and prints
 * which ones it won.
 */
import { createInterface } from 'node:readline';
import { openDatabase } from '../../src/db/database.js';
import { createRefreshRotation, type Rotation } from '../../src/store/refresh-rotation.js';

const db = openDatabase(process.argv[2]!);
const rotation = createRefreshRotation(db);
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const jobs = JSON.parse(line) as Rotation[];
  const won: boolean[] = [];
  for (const job of jobs) won.push(await rotation.rotate(job));
  process.stdout.write(`${JSON.stringify(won)}\n`);
  break;
}
lines.close();
await db.close();
