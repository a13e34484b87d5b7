import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, issueAccessToken, userWithToken, type TestUser } from '../support/tokens.js';

forEachDialect('user profile', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  let token: string;

  before(async () => {
    t = await createTestApp(dialect);
    ({ user, token } = await userWithToken(t, { displayName: 'Ada' }));
  });
  after(() => t.close());

  const thisYear = () => new Date(t.clock() * 1000).getUTCFullYear();
  const get = (url = '/v1/users/me') => t.app.inject({ method: 'GET', url, headers: bearer(token) });
  const put = (payload: unknown, url = '/v1/users/me') =>
    t.app.inject({ method: 'PUT', url, headers: bearer(token), payload: payload as object });

  async function rejects(payload: unknown, field: RegExp) {
    const before = (await get()).json();
    const response = await put(payload);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().error, 'invalid_request');
    assert.match(response.json().error_description, field);
    assert.deepEqual((await get()).json(), before, 'nothing changed');
  }

  it('returns the profile object with numbers and Unix seconds', async () => {
    const response = await get();
    assert.equal(response.statusCode, 200);
    const profile = response.json();
    assert.deepEqual(Object.keys(profile).sort(), ['birth_year', 'created_at', 'daily_step_goal', 'display_name', 'id', 'max_heart_rate', 'stride_length_cm', 'timezone']);
    assert.equal(profile.id, user.id);
    assert.equal(profile.display_name, 'Ada');
    assert.equal(profile.timezone, 'UTC');
    assert.equal(profile.daily_step_goal, 10000);
    assert.equal(profile.stride_length_cm, null);
    assert.equal(profile.birth_year, null);
    assert.equal(profile.max_heart_rate, null);
    assert.equal(profile.created_at, t.clock());
  });

  it('serves the same resource at /users', async () => {
    assert.deepEqual((await get('/users')).json(), (await get()).json());
    const response = await put({ daily_step_goal: 7000 }, '/users');
    assert.equal(response.statusCode, 200);
    assert.equal((await get()).json().daily_step_goal, 7000);
  });

  it('changes each editable field alone and returns the updated profile', async () => {
    const cases: Array<[string, unknown, unknown]> = [
      ['display_name', '  Grace Hopper ', 'Grace Hopper'],
      ['timezone', 'Europe/Berlin', 'Europe/Berlin'],
      ['timezone', 'europe/paris', 'Europe/Paris'],
      ['timezone', 'Asia/Kolkata', 'Asia/Kolkata'],
      ['timezone', 'Asia/Kathmandu', 'Asia/Kathmandu'],
      ['daily_step_goal', 0, 0],
      ['daily_step_goal', 12345, 12345],
      ['stride_length_cm', 74, 74],
      ['stride_length_cm', null, null],
      ['birth_year', 1900, 1900],
      ['birth_year', 1987, 1987],
      ['birth_year', thisYear(), thisYear()],
      ['birth_year', null, null],
      ['max_heart_rate', 100, 100],
      ['max_heart_rate', 230, 230],
      ['max_heart_rate', 187, 187],
      ['max_heart_rate', null, null],
    ];
    for (const [field, value, stored] of cases) {
      const before = (await get()).json();
      if (field === 'stride_length_cm') t.clock.advance(60); // it may change once a minute
      const response = await put({ [field]: value });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), { ...before, [field]: stored });
      assert.deepEqual((await get()).json(), response.json());
    }
  });

  it('changes several fields at once, and accepts an empty change', async () => {
    t.clock.advance(60); // the stride length may change once a minute
    const response = await put({ display_name: 'Lin', daily_step_goal: 8000, stride_length_cm: 70, timezone: 'America/New_York', birth_year: 1990, max_heart_rate: 192 });
    assert.equal(response.statusCode, 200);
    const { id: _id, created_at: _createdAt, ...changed } = response.json() as Record<string, unknown>;
    assert.deepEqual(changed, { display_name: 'Lin', daily_step_goal: 8000, stride_length_cm: 70, timezone: 'America/New_York', birth_year: 1990, max_heart_rate: 192 });
    const unchanged = await put({});
    assert.equal(unchanged.statusCode, 200);
    assert.deepEqual(unchanged.json(), response.json());
  });

  it('rejects bad values naming the field', async () => {
    await rejects({ timezone: 'Mars/Olympus_Mons' }, /^timezone must be an IANA time zone/);
    await rejects({ timezone: '+05:30' }, /^timezone/);
    await rejects({ timezone: '' }, /^timezone/);
    await rejects({ timezone: 5 }, /^timezone/);
    await rejects({ daily_step_goal: -1 }, /^daily_step_goal must be from 0 to/);
    await rejects({ daily_step_goal: 10000.5 }, /^daily_step_goal must be an integer/);
    await rejects({ daily_step_goal: '10000' }, /^daily_step_goal must be an integer/);
    await rejects({ daily_step_goal: null }, /^daily_step_goal must be an integer/);
    await rejects({ daily_step_goal: 10_000_000 }, /^daily_step_goal must be from 0 to 200000/);
    await rejects({ display_name: 'x'.repeat(101) }, /^display_name must be at most 100 characters/);
    await rejects({ display_name: '   ' }, /^display_name must not be empty/);
    await rejects({ display_name: 42 }, /^display_name must be a string/);
    await rejects({ display_name: 'a\u0000b' }, /^display_name must not contain control characters/);
    await rejects({ stride_length_cm: 0 }, /^stride_length_cm must be from 30 to 250/);
    await rejects({ stride_length_cm: 1000 }, /^stride_length_cm must be from 30 to 250/);
    await rejects({ stride_length_cm: 70.5 }, /^stride_length_cm must be an integer/);
    await rejects({ stride_length_cm: '70' }, /^stride_length_cm must be an integer/);
    await rejects({ birth_year: 1899 }, /^birth_year must be from 1900 to \d{4}, got 1899/);
    await rejects({ birth_year: thisYear() + 1 }, new RegExp(`^birth_year must be from 1900 to ${thisYear()}, got ${thisYear() + 1}`));
    await rejects({ birth_year: 1990.5 }, /^birth_year must be an integer/);
    await rejects({ birth_year: '1990' }, /^birth_year must be an integer/);
    await rejects({ birth_year: -1990 }, /^birth_year must be from 1900/);
    await rejects({ max_heart_rate: 99 }, /^max_heart_rate must be from 100 to 230, got 99/);
    await rejects({ max_heart_rate: 231 }, /^max_heart_rate must be from 100 to 230, got 231/);
    await rejects({ max_heart_rate: 180.5 }, /^max_heart_rate must be an integer/);
    await rejects({ max_heart_rate: true }, /^max_heart_rate must be an integer/);
    await rejects({ max_heart_rate: 180, birth_year: 1800 }, /^birth_year/);
  });

  it('refuses a lone surrogate, U+FFFD and bidirectional controls in display_name instead of storing U+FFFD', async () => {
    const before = (await get()).json();
    for (const escaped of ['\\ud800', 'Ada\\udfff', '\\ude00\\ud83d']) {
      const response = await t.app.inject({
        method: 'PUT', url: '/v1/users/me', headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: `{"display_name": "${escaped}"}`,
      });
      assert.equal(response.statusCode, 400, `${escaped}: ${response.body}`);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, /^display_name must be valid Unicode text/);
    }
    await rejects({ display_name: 'Ada\ufffd' }, /^display_name must not contain U\+FFFD/);
    await rejects({ display_name: 'Ada\u202eevil' }, /^display_name must not contain bidirectional control characters/);
    assert.deepEqual((await get()).json(), before);
    // A well-formed pair (an emoji) and a zero-width joiner (part of many names and emoji) are text.
    const emoji = await put({ display_name: 'Ada \u{1F6B6}\u200d\u2640\ufe0f' });
    assert.equal(emoji.statusCode, 200, emoji.body);
    assert.equal(emoji.json().display_name, 'Ada \u{1F6B6}\u200d\u2640\ufe0f');
  });

  it('refuses a display_name that reads as Stride: an app could make its person pass for the service', async () => {
    await rejects({ display_name: 'Stride' }, /^display_name must not read as "Stride", the name of this service/);
    await rejects({ display_name: 'Official Ｓｔｒｉｄｅ' }, /^display_name must not read as "Stride"/);
  });

  it('accepts a 100-character name, counted in characters', async () => {
    const name = '名'.repeat(100);
    const response = await put({ display_name: name });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().display_name, name);
  });

  it('rejects unknown and read-only fields, and a whole change when one field is bad', async () => {
    await rejects({ favourite_colour: 'blue' }, /unknown field "favourite_colour"/);
    await rejects({ id: 'someone-else' }, /^id cannot be changed/);
    await rejects({ created_at: 0 }, /^created_at cannot be changed/);
    await rejects({ display_name: 'Valid', daily_step_goal: -5 }, /^daily_step_goal/);
    await rejects([{ display_name: 'x' }], /body must be a JSON object/);
  });

  it('answers malformed JSON with 400 and other media types with 415', async () => {
    const malformed = await t.app.inject({
      method: 'PUT', url: '/v1/users/me', headers: { ...bearer(token), 'content-type': 'application/json' }, payload: '{"display_name": ',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().error, 'invalid_request');
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'application/xml']) {
      const response = await t.app.inject({
        method: 'PUT', url: '/v1/users/me', headers: { ...bearer(token), 'content-type': contentType }, payload: 'display_name=Eve',
      });
      assert.equal(response.statusCode, 415, contentType);
      assert.equal(response.json().error, 'unsupported_media_type');
    }
    assert.notEqual((await get()).json().display_name, 'Eve');
  });

  it('answers a token without read_profile only the id and the fields it sent, as stored; with read_profile the whole profile', async () => {
    const person = await userWithToken(t, { displayName: 'Private Person', timezone: 'Asia/Tokyo' });
    const createdAt = t.clock();
    await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(person.token), payload: { daily_step_goal: 12_345, stride_length_cm: 81 } });
    t.clock.advance(60); // the stride length may change once a minute
    const { token: writer } = await issueAccessToken(t, person.user, ['write_profile']);
    const write = (payload: object, url = '/v1/users/me') => t.app.inject({ method: 'PUT', url, headers: bearer(writer), payload });
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(writer) })).statusCode, 403);
    // `{}` read the whole profile (found November 2026): now the id alone, which introspection's `sub` tells the app anyway.
    const empty = await write({});
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(empty.json(), { id: person.user.id });
    // (Apart from the id, which is random and may hold any two digits.)
    const beyondId = empty.body.replace(person.user.id, '');
    for (const secret of ['Private Person', 'Asia/Tokyo', '12345', '81']) assert.ok(!beyondId.includes(secret), empty.body);
    for (const [payload, answer] of [
      [{ timezone: 'europe/paris' }, { timezone: 'Europe/Paris' }],
      [{ display_name: '  Renamed ', stride_length_cm: null }, { display_name: 'Renamed', stride_length_cm: null }],
      [{ daily_step_goal: 9000 }, { daily_step_goal: 9000 }],
    ] as const) {
      for (const url of ['/v1/users/me', '/users']) {
        const response = await write(payload, url);
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(response.json(), { id: person.user.id, ...answer }, `${url} ${JSON.stringify(payload)}`);
      }
    }
    // The changes were made; a token that reads the profile gets all of it, from a PUT too.
    const whole = { id: person.user.id, display_name: 'Renamed', timezone: 'Europe/Paris', daily_step_goal: 9000, stride_length_cm: null, birth_year: null, max_heart_rate: null, created_at: createdAt };
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(person.token) })).json(), whole);
    for (const payload of [{}, { daily_step_goal: 9000 }]) {
      assert.deepEqual((await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(person.token), payload })).json(), whole);
    }
    const { token: both } = await issueAccessToken(t, person.user, ['read_profile', 'write_profile']);
    assert.deepEqual((await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(both), payload: {} })).json(), whole);
  });

  it('lets a user see and change only their own profile', async () => {
    const other = await userWithToken(t, { displayName: 'Other' });
    await put({ display_name: 'Mine' });
    const response = await t.app.inject({ method: 'PUT', url: '/users', headers: bearer(other.token), payload: { display_name: 'Theirs' } });
    assert.equal(response.json().id, other.user.id);
    assert.equal((await get()).json().display_name, 'Mine');
  });

  it('stops answering on the next request once the token, its grant or its user is gone', async () => {
    const db = t.database.db.kysely;
    const revoked = await userWithToken(t);
    const getWith = (tokenValue: string) => t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(tokenValue) });
    assert.equal((await getWith(revoked.token)).statusCode, 200);
    await db.deleteFrom('grants').where('user_id', '=', revoked.user.id).execute();
    const afterRevocation = await getWith(revoked.token);
    assert.equal(afterRevocation.statusCode, 401);
    assert.equal(afterRevocation.json().error, 'invalid_token');

    const deleted = await userWithToken(t);
    assert.equal((await getWith(deleted.token)).statusCode, 200);
    await db.deleteFrom('users').where('id', '=', deleted.user.id).execute();
    assert.equal((await getWith(deleted.token)).statusCode, 401);

    const expiring = await userWithToken(t);
    assert.equal((await getWith(expiring.token)).statusCode, 200);
    t.clock.advance(3600);
    try {
      assert.equal((await getWith(expiring.token)).statusCode, 401);
    } finally {
      t.clock.advance(-3600);
    }
  });

  it('shows a change made elsewhere (the account page) on the next GET', async () => {
    await t.database.db.kysely.updateTable('users').set({ display_name: 'Changed Elsewhere', timezone: 'Asia/Tokyo' }).where('id', '=', user.id).execute();
    const profile = (await get()).json();
    assert.equal(profile.display_name, 'Changed Elsewhere');
    assert.equal(profile.timezone, 'Asia/Tokyo');
  });
});
