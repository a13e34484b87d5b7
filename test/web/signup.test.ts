/**
 * Sign-up does not tell a stranger which emails have accounts: a taken email gets the answer a
 * free one gets — status, headers, body, cookies — after the same Argon2id work.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { after, before, it } from 'node:test';
import { findUserByEmail, type User } from '../../src/store/users.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { Browser, formFields, signIn, type Response } from '../oauth/flow.js';
import { newAccount, PASSWORD } from './pages-support.js';

const PROBE_PASSWORD = 'a probing password';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** What an outsider sees of a sign-up answer (the request id aside, which differs every time). */
function visible(response: Response) {
  const cookies = [response.headers['set-cookie'] ?? []].flat().map((line) => line.split('=')[0]);
  return { status: response.status, location: response.headers.location, type: response.headers['content-type'], body: response.body, cookies };
}

forEachDialect('sign-up and existing emails', (dialect) => {
  let t: TestApp;
  let existing: User;
  before(async () => {
    t = await createTestApp(dialect);
    existing = await newAccount(t, 'Existing');
  });
  after(() => t.close());

  async function signUp(email: string): Promise<{ response: Response; ms: number }> {
    const browser = new Browser(t.app);
    const page = await browser.get('/signup?return_to=%2Fdashboard');
    const fields = formFields(page.body, '/signup');
    const start = performance.now();
    const response = await browser.post('/signup', { ...fields, email, password: PROBE_PASSWORD, display_name: 'Probe' });
    return { response, ms: performance.now() - start };
  }

  it('answers a taken email exactly like a free one, in the same time class', async () => {
    const free: Array<{ response: Response; ms: number }> = [];
    const taken: Array<{ response: Response; ms: number }> = [];
    const freeEmails: string[] = [];
    // Interleaved, so a slower moment of the machine weighs on both alike.
    for (let i = 0; i < 5; i++) {
      freeEmails.push(`probe-${i}-${randomBytes(4).toString('hex')}@example.com`);
      free.push(await signUp(freeEmails[i]!));
      taken.push(await signUp(i % 2 === 0 ? existing.email : existing.email.toUpperCase()));
    }
    for (let i = 0; i < free.length; i++) {
      assert.deepEqual(visible(taken[i]!.response), visible(free[i]!.response));
    }
    assert.equal(free[0]!.response.status, 303);
    assert.equal(free[0]!.response.location().pathname, '/login');
    assert.equal(free[0]!.response.location().searchParams.get('return_to'), '/dashboard');

    // Both spend one Argon2id hash: the medians stay within 3x of each other (a 409 without a
    // hash answered in a few milliseconds, against tens for a hash).
    const ratio = median(taken.map((a) => a.ms)) / median(free.map((a) => a.ms));
    assert.ok(ratio > 1 / 3 && ratio < 3, `taken/free median time ratio ${ratio.toFixed(2)} (free ${free.map((a) => a.ms.toFixed(1))}, taken ${taken.map((a) => a.ms.toFixed(1))})`);

    // The free emails now have accounts that sign in; the taken one kept its own password.
    for (const email of freeEmails) assert.ok(await findUserByEmail(t.database.db.kysely, email));
    assert.equal((await signIn(new Browser(t.app), freeEmails[0]!, PROBE_PASSWORD)).status, 303);
    assert.equal((await signIn(new Browser(t.app), existing.email, PROBE_PASSWORD)).status, 401);
    assert.equal((await signIn(new Browser(t.app), existing.email, PASSWORD)).status, 303);
  });
});
