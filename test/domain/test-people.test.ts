/**
 * Test people (src/domain/test-people.ts): one of each life with data of every kind, owned and
 * flagged; syncs that continue their lives without a gap or a second copy; deleted with their
 * developer, every kind of their data with them; and each sandbox action making exactly the events
 * a real person's same action through the API or the account page makes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { after, before, it } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { registerApp, rotateClientSecret } from '../../src/domain/apps.js';
import { deleteAccount } from '../../src/domain/users.js';
import type { App } from '../../src/store/apps.js';
import {
  addTestPeople,
  changeTestPersonZone,
  isTestPerson,
  lateSyncTestPerson,
  lateWalk,
  revokeTestPersonApp,
  syncData,
  syncTestPerson,
  advanceLiveSandbox,
  MAX_TEST_PEOPLE,
  TEST_PERSON_PASSWORD_HASH,
  type SandboxSettings,
} from '../../src/domain/test-people.js';
import { LIVES, synthesizeDates } from '../../src/domain/synthetic-person.js';
import type { PersonData } from '../../src/domain/synthetic-person.js';
import { createStores, type Stores } from '../../src/store/stores.js';
import type { TestPerson } from '../../src/store/test-people.js';
import type { User } from '../../src/store/users.js';
import { authorizeAndAllow, authorizeUrl, Browser, createFixture, createOAuthTestApp, formFields, REDIRECT_URI, signIn, tokenRequest, type Fixture } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { bearer } from '../support/tokens.js';
import { newAccount, PASSWORD, signedIn } from '../web/pages-support.js';
import { eventRows } from '../support/events.js';

cheapPasswordHashing();

const SETTINGS: SandboxSettings = { days: 2, coalesceSeconds: 0 };
const WORKER = new URL('./test-people-worker.js', import.meta.url);
const ALL_SCOPES = ['read_profile', 'write_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body'];

it('makes the same date the same day, whatever range it is made in', () => {
  const whole = synthesizeDates(LIVES.runner, { firstDate: '2026-03-01', days: 4 }, 42);
  const last = synthesizeDates(LIVES.runner, { firstDate: '2026-03-03', days: 2 }, 42);
  const from = last.steps[0]!.start_time;
  const tail = (data: PersonData) => data.steps.filter((s) => s.start_time >= from);
  assert.ok(tail(whole).length > 100);
  assert.deepEqual(tail(whole), tail(last));
  assert.deepEqual(whole.sleep.slice(-2), last.sleep.slice(-2));
  assert.notDeepEqual(synthesizeDates(LIVES.runner, { firstDate: '2026-03-03', days: 1 }, 43).steps, synthesizeDates(LIVES.runner, { firstDate: '2026-03-03', days: 1 }, 42).steps);
});

forEachDialect('test people', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let people: TestPerson[];
  let allApp: App;
  let allAppSecret: string;
  const db = () => t.database.db.kysely;

  /** Rows of every kind of data kept about `userId`. */
  async function dataRows(userId: string) {
    const count = async (table: 'series_days' | 'sleep_sessions' | 'body_weights' | 'grants' | 'test_people' | 'users', column: 'user_id' | 'id') =>
      Number((await db().selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where(column, '=', userId).executeTakeFirstOrThrow()).n);
    const metrics = (await db().selectFrom('series_days').select('metric').distinct().where('user_id', '=', userId).execute()).map((row) => row.metric).sort();
    return {
      metrics,
      series: await count('series_days', 'user_id'),
      sleep: await count('sleep_sessions', 'user_id'),
      weight: await count('body_weights', 'user_id'),
      grants: await count('grants', 'user_id'),
      life: await count('test_people', 'user_id'),
      account: await count('users', 'id'),
    };
  }

  /** The events about `userId`, as apps see them, without the user's id. */
  /** The user's events in the feeds, oldest first; after `afterSeq` when given. */
  async function eventsOf(userId: string, afterSeq = 0) {
    const rows = await eventRows(db(), { userId, afterSeq });
    return rows.map((row) => {
      const { user_id, ...data } = JSON.parse(row.data) as Record<string, unknown>;
      assert.equal(user_id, userId);
      return { type: row.type, data };
    });
  }

  before(async () => {
    t = await createOAuthTestApp(dialect, { SANDBOX_DAYS: '2' });
    f = await createFixture(t);
    allApp = (await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: 'Whole Life', redirectUris: [REDIRECT_URI], scopes: ALL_SCOPES, isPublic: false })).app;
    allAppSecret = (await rotateClientSecret(t.database.stores, t.clock, allApp));
    people = await addTestPeople(t.database.stores, f.developer, t.clock(), SETTINGS);
  });
  after(() => t.close());

  it('makes one test person of each life, flagged as the developer\'s, each with days of data of every kind', async () => {
    assert.deepEqual(people.map((person) => person.life), ['office_worker', 'runner', 'night_shift_worker', 'traveller']);
    assert.deepEqual(people.map((person) => person.timezone), ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'America/New_York']);
    let weighings = 0;
    for (const person of people) {
      const user = (await t.database.stores.users.findById(person.id))!;
      assert.ok(isTestPerson(user) && user.test_person_owner_id === f.developer.id);
      assert.match(user.email, /@test-people\.invalid$/);
      const rows = await dataRows(person.id);
      assert.deepEqual(rows.metrics, ['calories', 'distance', 'heartrate', 'steps']);
      assert.ok(rows.sleep >= 1, `${rows.sleep} nights`);
      weighings += rows.weight;
    }
    assert.ok(weighings > 0);
    const sorted = (ids: string[]) => [...ids].sort();
    assert.deepEqual(sorted((await t.database.stores.testPeople.listOf(f.developer.id)).map((person) => person.id)), sorted(people.map((person) => person.id)));
    assert.deepEqual(await t.database.stores.testPeople.listOf(f.user.id), []);
    await assert.rejects(addTestPeople(t.database.stores, (await t.database.stores.users.findById(people[0]!.id))!, t.clock(), SETTINGS), /is a test person/);
  });

  it('syncs the data since the last sync, continuing the person\'s days without a gap or a second copy', async () => {
    const person = people[1]!;
    const { stores } = t.database;
    const before = await stores.steps.samplesAfter(person.id, -1, 1e6);
    t.clock.advance(26 * 3600);
    const written = await syncTestPerson(stores, person, t.clock(), SETTINGS);
    assert.ok(written && (written.steps ?? 0) > 0 && (written.heartrate ?? 0) > 20 * 60, JSON.stringify(written));
    const after = await stores.steps.samplesAfter(person.id, -1, 1e6);
    assert.deepEqual(after.slice(0, before.length), before, 'what was there before stays as it was');
    // The whole range, made at once, is what the two pieces made.
    const whole = synthesizeDates(LIVES.runner, { firstDate: person.firstDate, days: 4 }, person.seed);
    const end = t.clock() - (t.clock() % 60);
    assert.deepEqual(after, whole.steps.filter((sample) => sample.start_time < end));
    // The same range again is no one's: the person moved on.
    assert.equal(await syncTestPerson(stores, person, t.clock(), SETTINGS), null);
    const moved = (await stores.testPeople.findOwned(f.developer.id, person.id))!;
    assert.equal(moved.syncedUntil, end);
    assert.deepEqual(await syncTestPerson(stores, moved, t.clock(), SETTINGS), {});
    assert.equal(await stores.testPeople.findOwned(f.user.id, person.id), undefined, 'someone else cannot find them');
  });

  it('advances, with SANDBOX_LIVE, only the test people of developers with an active webhook endpoint', async () => {
    t.clock.advance(600);
    assert.equal(await advanceLiveSandbox(t.database.stores, t.clock(), SETTINGS), 0);
    const endpoint = await t.database.stores.webhooks.add(f.app.id, 'http://127.0.0.1:9/hook', ['steps.updated'], t.clock(), { atMost: 10 });
    assert.equal(await advanceLiveSandbox(t.database.stores, t.clock(), SETTINGS), 0, 'an endpoint not yet verified is sent nothing');
    // As if it had answered its challenge (webhooks/endpoints.ts).
    await db().updateTable('webhook_endpoints').set({ state: 'active', challenge: null }).where('id', '=', endpoint!.id).execute();
    assert.equal(await advanceLiveSandbox(t.database.stores, t.clock(), SETTINGS), people.length);
    for (const person of await t.database.stores.testPeople.listOf(f.developer.id)) assert.equal(person.syncedUntil, t.clock() - (t.clock() % 60));
    await t.database.stores.webhooks.delete(endpoint!.id);
  });

  it('makes exactly the events of a real person\'s same actions: sync, late sync, time zone, revoke', async () => {
    const { stores } = t.database;
    // A real person in the test person's zone, connected to the same app with the same scopes.
    const person = (await stores.testPeople.findOwned(f.developer.id, people[0]!.id))!;
    const real = await newAccount(t, 'Real Walker');
    await stores.users.updateProfile(real.id, { timezone: person.timezone }, t.clock());
    const browser = await signedIn(t, real);
    const back = await authorizeAndAllow(browser, authorizeUrl({ response_type: 'code', client_id: allApp.clientId, redirect_uri: REDIRECT_URI, scope: ALL_SCOPES.join(' '), state: 's' }));
    const exchange = await tokenRequest(t, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT_URI, client_id: allApp.clientId, client_secret: allAppSecret });
    const token = exchange.json().access_token as string;
    assert.ok(token, exchange.body);
    await connectAsDeveloper(t, { developer: f.developer, app: allApp }, person);
    const upload = async (data: PersonData) => {
      const post = async (path: string, payload: object) => {
        const response = await t.app.inject({ method: 'POST', url: path, headers: bearer(token), payload });
        assert.equal(response.statusCode, 200, `${path}: ${response.body}`);
      };
      if (data.steps.length) await post('/v1/users/me/activities/steps/', { samples: data.steps });
      if (data.calories.length) await post('/v1/users/me/activities/calories/', { samples: data.calories });
      if (data.heartrate.length) await post('/v1/users/me/heartrate/', { samples: data.heartrate });
      for (const session of data.sleep) await post('/v1/users/me/sleep/', session);
      for (const weight of data.weight) await post('/v1/users/me/body/weight/', weight);
    };
    const compare = async (label: string, sandbox: () => Promise<unknown>, realAction: () => Promise<unknown>) => {
      // Marked by position, not by count: a revocation takes the app's earlier events about the data.
      const mark = Number((await db().selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0);
      await sandbox();
      await realAction();
      const made = await eventsOf(person.id, mark);
      assert.ok(made.length > 0, `${label} made no event`);
      assert.deepEqual(made, await eventsOf(real.id, mark), label);
      return made;
    };

    // Sync now: more than a day since the last sync, a night among it.
    t.clock.advance(30 * 3600);
    const current = (await stores.testPeople.findOwned(f.developer.id, person.id))!;
    const { data } = syncData(current, t.clock(), SETTINGS.days);
    assert.ok(data.steps.length > 0 && data.heartrate.length > 0 && data.sleep.length > 0);
    const synced = await compare('sync', () => syncTestPerson(stores, current, t.clock(), SETTINGS), () => upload(data));
    assert.ok(synced.some((event) => event.type === 'steps.updated') && synced.some((event) => event.type === 'heartrate.updated'));

    // Late sync: a walk three days ago, which changes that past day.
    const late = await compare('late sync', () => lateSyncTestPerson(stores, current, t.clock(), SETTINGS), () => upload(lateWalk(current, t.clock())));
    const threeDaysAgo = new Date((t.clock() - 3 * 86_400) * 1000).toLocaleDateString('en-CA', { timeZone: current.timezone });
    assert.deepEqual(late.find((event) => event.type === 'steps.updated')!.data.dates, [threeDaysAgo]);

    // Change time zone: the profile.updated of a change through the API.
    await compare('time zone', () => changeTestPersonZone(stores, current, 'asia/tokyo', t.clock()), async () => {
      const response = await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { timezone: 'Asia/Tokyo' } });
      assert.equal(response.statusCode, 200, response.body);
    });
    await assert.rejects(changeTestPersonZone(stores, current, 'Mars/Olympus', t.clock()), /timezone must be an IANA time zone/);

    // Revoke app: as the person's own Revoke on the account page.
    const revoked = await compare('revoke', () => revokeTestPersonApp(stores, current, allApp.id, t.clock()), async () => {
      const account = await browser.get('/account');
      const action = `/account/connected-apps/${encodeURIComponent(allApp.id)}/revoke`;
      assert.equal((await browser.post(action, formFields(account.body, action))).status, 303);
    });
    assert.deepEqual(revoked, [{ type: 'grant.revoked', data: { reason: 'user_revoked' } }]);
    // Of what the app heard, only the grant's start and end are left to replay, for both alike.
    const left = async (userId: string) => (await eventsOf(userId)).map((event) => event.type);
    assert.deepEqual(await left(person.id), ['grant.created', 'grant.revoked']);
    assert.deepEqual(await left(real.id), ['grant.created', 'grant.revoked']);
    assert.equal(await revokeTestPersonApp(stores, current, allApp.id, t.clock()), false);
  });

  it('goes with their developer\'s account, every kind of their data and their grants with them', async () => {
    const developer = await newAccount(t, 'Leaving Developer');
    const theirs = await addTestPeople(t.database.stores, developer, t.clock(), SETTINGS);
    const { app } = await registerApp(t.database.stores.apps, t.clock, developer.id, {
      name: 'Short Lived', redirectUris: [REDIRECT_URI], scopes: ['read_profile', 'read_activity'], isPublic: false,
    });
    await connectAsDeveloper(t, { ...f, developer, app }, theirs[2]!);
    assert.equal((await dataRows(theirs[2]!.id)).grants, 1);
    // Up to MAX_TEST_PEOPLE, and no more: adding four to seventeen is refused, nothing made.
    const bare = Array.from({ length: 13 }, () => {
      const id = randomUUID();
      return {
        user: { id, email: `bare-${id}@test-people.invalid`, password_hash: TEST_PERSON_PASSWORD_HASH, display_name: 'Bare', stride_length_cm: null, created_at: t.clock(), updated_at: t.clock(), test_person_owner_id: developer.id },
        life: 'runner', seed: 1, firstDate: '2026-01-01', syncedUntil: t.clock(),
      };
    });
    assert.equal((await t.database.stores.testPeople.addUpTo(developer.id, bare, MAX_TEST_PEOPLE) as { made: TestPerson[] }).made.length, 13);
    await assert.rejects(addTestPeople(t.database.stores, developer, t.clock(), SETTINGS), /has 17 test people already; a developer can have at most 20/);
    assert.equal((await t.database.stores.testPeople.listOf(developer.id)).length, 17);
    await assert.rejects(deleteAccount(t.database.stores.users, t.clock, developer), /owns 1 app/);
    await t.database.stores.apps.delete(app.id);
    await deleteAccount(t.database.stores.users, t.clock, developer);
    assert.equal(Number((await db().selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('test_person_owner_id', '=', developer.id).executeTakeFirstOrThrow()).n), 0);
    for (const person of theirs) {
      assert.deepEqual(await dataRows(person.id), { metrics: [], series: 0, sleep: 0, weight: 0, grants: 0, life: 0, account: 0 });
    }
    // Another developer's test people stay.
    assert.equal((await t.database.stores.testPeople.listOf(f.developer.id)).length, people.length);
  });

  it('never passes the cap with adds sent at once, from one process or two (found November 2026: 32 of 20 on PostgreSQL)', async () => {
    type Outcome = { ids: string[] } | { error: string };
    const addsAtOnce = async (stores: Stores, developer: User, count: number): Promise<Outcome[]> =>
      (await Promise.allSettled(Array.from({ length: count }, () => addTestPeople(stores, developer, t.clock(), SETTINGS)))).map((outcome) =>
        outcome.status === 'fulfilled' ? { ids: outcome.value.map((person) => person.id) } : { error: (outcome.reason as Error).message },
      );
    /** Eight adds of four against a cap of 20: five made, three refused saying why, and the twenty stored are the twenty answered, each whole. */
    async function heldTheCap(developer: User, outcomes: Outcome[]) {
      const made = outcomes.flatMap((outcome) => ('ids' in outcome ? [outcome.ids] : []));
      const refused = outcomes.flatMap((outcome) => ('error' in outcome ? [outcome.error] : []));
      assert.deepEqual(made.map((ids) => ids.length), [4, 4, 4, 4, 4], refused.join('; '));
      assert.equal(refused.length, 3);
      for (const message of refused) assert.match(message, /has 20 test people already; a developer can have at most 20$/);
      const stored = await t.database.stores.testPeople.listOf(developer.id);
      assert.equal(stored.length, MAX_TEST_PEOPLE);
      assert.deepEqual(stored.map((person) => person.id).sort(), made.flat().sort());
      // Their data is written after the lock is let go, and each of them has it.
      for (const person of stored) assert.ok((await dataRows(person.id)).series > 0, person.email);
    }

    // One process.
    const alone = await newAccount(t, 'Racing Developer');
    await heldTheCap(alone, await addsAtOnce(t.database.stores, alone, 8));

    // Two processes: four adds here, four in a process of its own on the same database.
    const split = await newAccount(t, 'Racing Developer');
    const worker = startWorker(t.database.url, split.id, t.clock(), 4);
    await worker.ready;
    const [here, there] = await Promise.all([addsAtOnce(t.database.stores, split, 4), worker.go()]);
    await heldTheCap(split, [...here, ...there]);

    // On PostgreSQL also two pools in this process, started together. (On SQLite a second
    // connection in one process cannot stand for another process: its wait for the write lock is
    // synchronous, and would hold up the event loop the first connection's transaction needs.)
    if (dialect === 'postgres') {
      const otherDb = openDatabase(t.database.url);
      try {
        const other = createStores(otherDb);
        const pooled = await newAccount(t, 'Racing Developer');
        const [first, second] = await Promise.all([addsAtOnce(t.database.stores, pooled, 4), addsAtOnce(other, pooled, 4)]);
        await heldTheCap(pooled, [...first, ...second]);
        // The same batch sent twice at once, through both: one four, the answer of each.
        const again = await newAccount(t, 'Double Clicking Developer');
        const [once, twice] = await Promise.all([addTestPeople(t.database.stores, again, t.clock(), SETTINGS, 'batch-1'), addTestPeople(other, again, t.clock(), SETTINGS, 'batch-1')]);
        assert.equal(once.length, 4);
        assert.deepEqual(once.map((person) => person.id), twice.map((person) => person.id));
        assert.equal((await t.database.stores.testPeople.listOf(again.id)).length, 4);
      } finally {
        await otherDb.close();
      }
    }
  });
});

/** Adds test people for `ownerId` `count` times at once in another process, on `go`; resolves to each add's people's ids or its error's message. */
function startWorker(url: string, ownerId: string, now: number, count: number): { ready: Promise<void>; go(): Promise<Array<{ ids: string[] } | { error: string }>> } {
  const child = spawn(process.execPath, [WORKER.pathname, url, ownerId, String(now), String(count), String(SETTINGS.days)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = (): Promise<string> => new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`test-people worker exited with ${code}`)));
  });
  const ready = next().then((line) => assert.equal(line, 'ready'));
  return {
    ready,
    async go() {
      const answer = next();
      child.stdin.write('go\n');
      return JSON.parse(await answer) as Array<{ ids: string[] } | { error: string }>;
    },
  };
}

/** The developer allows `app` on its consent page, choosing `person` to answer. */
async function connectAsDeveloper(t: TestApp, f: Pick<Fixture, 'developer' | 'app'>, person: TestPerson): Promise<void> {
  const browser = new Browser(t.app);
  assert.equal((await signIn(browser, f.developer.email, PASSWORD)).status, 303);
  const page = await browser.get(authorizeUrl({ response_type: 'code', client_id: f.app.clientId, redirect_uri: REDIRECT_URI, scope: f.app.scopes.join(' '), state: 's' }));
  assert.equal(page.status, 200, page.body.slice(0, 300));
  const granted = [...page.body.matchAll(/name="granted_scope" value="([^"]+)" checked/g)].map((m) => m[1]!);
  const decision = await browser.post('/oauth2/authorize', { ...formFields(page.body, '/oauth2/authorize'), granted_scope: granted, consent_as: person.id, decision: 'allow' });
  assert.equal(decision.status, 303, decision.body.slice(0, 300));
  assert.ok(decision.location().searchParams.get('code'));
}

