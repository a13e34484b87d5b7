/**
 * The export streams: three years of minute samples (1,576,800 rows) go out a page at a time over a
 * real connection, and the server's heap stays far below what holding them would take.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../support/app.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { Browser, signIn } from '../oauth/flow.js';
import { newAccount, PASSWORD } from './pages-support.js';
import { packedStepDays } from '../support/series-days.js';

cheapPasswordHashing();

const ROWS = 3 * 525_600;
const START = 1_600_000_020;

let t: TestApp;
let origin: string;
before(async () => {
  t = await createTestApp('sqlite');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(() => t.close());

it('streams three years of minutes with a flat heap, every row in order', async () => {
  const person = await newAccount(t, 'Long History');
  const days = packedStepDays(person.id, START, ROWS, (i) => i % 50);
  for (let i = 0; i < days.length; i += 500) await t.database.db.kysely.insertInto('series_days').values(days.slice(i, i + 500)).execute();
  const browser = new Browser(null, origin);
  assert.equal((await signIn(browser, person.email, PASSWORD)).status, 303);
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

  global.gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
  let rows = -1; // the header line
  let bytes = 0;
  let tail = '';
  let previous = START - 60;
  let ordered = true;
  try {
    const response = await fetch(`${origin}/account/export/steps.csv`, { headers: { cookie } });
    assert.equal(response.status, 200);
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      bytes += chunk.byteLength;
      const lines = (tail + decoder.decode(chunk, { stream: true })).split('\n');
      tail = lines.pop()!;
      for (const line of lines) {
        rows += 1;
        if (rows === 0) continue;
        const time = Number(line.slice(0, line.indexOf(',')));
        if (time !== previous + 60) ordered = false;
        previous = time;
      }
    }
  } finally {
    clearInterval(sampler);
  }
  assert.equal(rows, ROWS);
  assert.ok(ordered, 'every minute, in order, none twice');
  // Held at once, the rows alone take well over 100 MB of heap (an object each); the body is about 21 MB.
  const grewMb = (peak - baseline) / 1024 / 1024;
  assert.ok(grewMb < 48, `the heap grew ${grewMb.toFixed(1)} MB while ${(bytes / 1024 / 1024).toFixed(1)} MB were exported`);
});
