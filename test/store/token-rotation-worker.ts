/**
 * A second process for the rotation tests: opens the database named on the command line, prints
 * `ready`, reads one line of JSON `{ jobs, together }` from stdin, runs the rotations one after
 * another (or all at once, so that they are grouped as a busy server groups them) and prints which
 * ones it won.
 */
import { createInterface } from 'node:readline';
import { openDatabase } from '../../src/db/database.js';
import type { Rotation } from '../../src/store/refresh-rotation.js';
import { createStores } from '../../src/store/stores.js';

const db = openDatabase(process.argv[2]!);
const rotation = createStores(db).rotation;
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
for await (const line of lines) {
  const { jobs, together } = JSON.parse(line) as { jobs: Rotation[]; together: boolean };
  const won: boolean[] = [];
  if (together) won.push(...(await Promise.all(jobs.map((job) => rotation.rotate(job)))));
  else for (const job of jobs) won.push(await rotation.rotate(job));
  process.stdout.write(`${JSON.stringify(won)}\n`);
  break;
}
lines.close();
await db.close();
