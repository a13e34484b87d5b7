/**
 * Neither sign-up nor sign-in tells a stranger which emails have accounts: a taken email gets the
 * answer a free one gets — status, headers, body, cookies — after the same Argon2id work.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { after, before, it } from 'node:test';
import type { User } from '../../src/store/users.js';
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

/** Both spend one Argon2id hash: the medians stay within 3× of each other (no hash: a few ms, against tens). */
/** Requests of each kind a timing comparison makes. */
const ROUNDS = 11;

function assertSameTimeClass(a: number[], b: number[], what: string): void {
  const ratio = median(a) / median(b);
  assert.ok(ratio > 1 / 3 && ratio < 3, `${what}: median time ratio ${ratio.toFixed(2)} (${a.map((ms) => ms.toFixed(1))} against ${b.map((ms) => ms.toFixed(1))})`);
}

forEachDialect('sign-in and sign-up with existing emails', (dialect) => {
  let t: TestApp;
  let existing: User;
  before(async () => {
    t = await createTestApp(dialect);
    existing = await newAccount(t, 'Existing');
  });
  after(() => t.close());

  /** A new browser fills the form of `page` and posts it to `action`; only the POST is timed. */
  async function submitTimed(page: string, action: string, fields: Record<string, string>): Promise<{ response: Response; ms: number }> {
    const browser = new Browser(t.app);
    const shown = await browser.get(page);
    const hidden = formFields(shown.body, action);
    const start = performance.now();
    const response = await browser.post(action, { ...hidden, ...fields });
    return { response, ms: performance.now() - start };
  }

  const signUp = (email: string) => submitTimed('/signup?return_to=%2Fdashboard', '/signup', { email, password: PROBE_PASSWORD, display_name: 'Probe' });

  it('answers a taken email exactly like a free one, in the same time class', async () => {
    const free: Array<{ response: Response; ms: number }> = [];
    const taken: Array<{ response: Response; ms: number }> = [];
    const freeEmails: string[] = [];
    // Interleaved, each kind first every other time, so a slower moment of the machine (or the
    // work one request leaves behind for the next) weighs on both alike; eleven of each, so that a
    // few slow moments do not move the medians.
    for (let i = 0; i < ROUNDS; i++) {
      freeEmails.push(`probe-${i}-${randomBytes(4).toString('hex')}@example.com`);
      const takenEmail = i % 2 === 0 ? existing.email : existing.email.toUpperCase();
      if (i % 2 === 0) {
        free.push(await signUp(freeEmails[i]!));
        taken.push(await signUp(takenEmail));
      } else {
        taken.push(await signUp(takenEmail));
        free.push(await signUp(freeEmails[i]!));
      }
    }
    for (let i = 0; i < free.length; i++) {
      assert.deepEqual(visible(taken[i]!.response), visible(free[i]!.response));
    }
    assert.equal(free[0]!.response.status, 303);
    assert.equal(free[0]!.response.location().pathname, '/login');
    assert.equal(free[0]!.response.location().searchParams.get('return_to'), '/dashboard');

    assertSameTimeClass(taken.map((a) => a.ms), free.map((a) => a.ms), 'taken/free');

    // The free emails now have accounts that sign in; the taken one kept its own password.
    for (const email of freeEmails) assert.ok(await t.database.stores.users.findByEmail(email));
    assert.equal((await signIn(new Browser(t.app), freeEmails[0]!, PROBE_PASSWORD)).status, 303);
    assert.equal((await signIn(new Browser(t.app), existing.email, PROBE_PASSWORD)).status, 401);
    assert.equal((await signIn(new Browser(t.app), existing.email, PASSWORD)).status, 303);
  });

  async function attempt(email: string): Promise<{ status: number; error: string | undefined; ms: number }> {
    const { response, ms } = await submitTimed('/login', '/login', { email, password: PROBE_PASSWORD });
    return { status: response.status, error: /class="error"[^>]*>([^<]*)</.exec(response.body)?.[1]?.trim(), ms };
  }

  it('answers an unknown email like a wrong password, in the same time class', async () => {
    const unknown: Array<Awaited<ReturnType<typeof attempt>>> = [];
    const wrong: Array<Awaited<ReturnType<typeof attempt>>> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const unknownEmail = `nobody-${i}-${randomBytes(4).toString('hex')}@example.com`;
      if (i % 2 === 0) {
        unknown.push(await attempt(unknownEmail));
        wrong.push(await attempt(existing.email));
      } else {
        wrong.push(await attempt(existing.email));
        unknown.push(await attempt(unknownEmail));
      }
    }
    for (let i = 0; i < unknown.length; i++) {
      assert.equal(unknown[i]!.status, 401);
      assert.deepEqual({ status: wrong[i]!.status, error: wrong[i]!.error }, { status: unknown[i]!.status, error: unknown[i]!.error });
    }
    assert.ok(unknown[0]!.error, 'the page says why the sign-in failed');
    assertSameTimeClass(wrong.map((a) => a.ms), unknown.map((a) => a.ms), 'wrong password/unknown email');
  });
});
