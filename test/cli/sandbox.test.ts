/**
 * `stride sandbox add --owner E` and `stride sandbox list --owner E` (src/cli/commands.ts): the
 * developer's test people, one of each life, and the one-line failures for an owner that is not a
 * developer's account.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCliInProcess, expectCliFailure } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

// On SQLite only: the commands call the domain functions that test/domain/test-people.test.ts runs on both databases.
describe('stride sandbox', () => {
  let database: TestDatabase;
  let cli: (...args: string[]) => ReturnType<typeof runCliInProcess>;
  before(async () => {
    database = await createTestDatabase('sqlite');
    // Two days: one would be the local day so far, which for some lives and hours (the night-shift
    // worker in Kolkata, from midnight there until they wake at 15:30) holds no data yet.
    cli = (...args) => runCliInProcess(args, { DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:4321', SANDBOX_DAYS: '2' });
    assert.equal((await cli('users', 'create', '--email', 'dev@example.com', '--password', 'correct horse')).code, 0);
  });
  after(() => database.drop());

  const expectFailure = (args: string[], pattern: RegExp) => expectCliFailure(cli, args, pattern);

  it('adds one test person of each life for the developer, and lists them', async () => {
    const added = await cli('sandbox', 'add', '--owner', 'Dev@Example.com', '--json');
    assert.equal(added.code, 0, added.stderr);
    const people = JSON.parse(added.stdout) as Array<{ id: string; email: string; life: string; timezone: string; synced_until: string }>;
    assert.deepEqual(people.map((person) => person.life), ['office_worker', 'runner', 'night_shift_worker', 'traveller']);
    for (const person of people) assert.match(person.email, /^[a-z-]+-[0-9a-f]{8}@test-people\.invalid$/);
    const developer = (await database.stores.users.findByEmail('dev@example.com'))!;
    for (const person of people) {
      assert.equal((await database.stores.users.findById(person.id))!.test_person_owner_id, developer.id);
      assert.ok((await database.stores.heartRate.samplesAfter(person.id, -1, 10)).length > 0, 'with data');
    }
    const listed = await cli('sandbox', 'list', '--owner', 'dev@example.com', '--json');
    assert.deepEqual((JSON.parse(listed.stdout) as typeof people).map((person) => person.id).sort(), people.map((person) => person.id).sort());
    const text = await cli('sandbox', 'list', '--owner', 'dev@example.com');
    assert.equal(text.stdout.trim().split('\n').length, 4);
    assert.match(text.stdout, /night-shift worker/);
    // A table: every line's time zone starts in the same column, whatever the email's length.
    const zoneColumns = text.stdout.trim().split('\n').map((line) => line.search(/ (Europe|America|Asia)\//));
    assert.equal(new Set(zoneColumns).size, 1, text.stdout);
  });

  it('fails in one line for an unknown owner, a missing one, or a test person as owner', async () => {
    await expectFailure(['sandbox', 'add', '--owner', 'nobody@example.com'], /^stride: no user with email nobody@example\.com$/m);
    await expectFailure(['sandbox', 'list', '--owner', 'nobody@example.com'], /no user with email nobody@example\.com/);
    await expectFailure(['sandbox', 'add'], /--owner is required/);
    const [person] = (JSON.parse((await cli('sandbox', 'list', '--owner', 'dev@example.com', '--json')).stdout) as Array<{ email: string }>);
    await expectFailure(['sandbox', 'add', '--owner', person!.email], /is a test person; give the email of the developer who owns them/);
    await expectFailure(['users', 'set-password', '--email', person!.email, '--password', 'correct horse'], /is a test person: test people cannot sign in/);
    const fresh = await cli('sandbox', 'list', '--owner', 'dev@example.com');
    assert.equal(fresh.stdout.trim().split('\n').length, 4, 'nothing was added by the failures');
  });
});
