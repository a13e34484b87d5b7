/**
 * /openapi.json is valid OpenAPI 3.1, lists the API and not the pages, and says the truth: real
 * answers — successes and errors — match the schema declared for their route and status, and the
 * input schemas refuse what the routes refuse. /docs reads it with assets served by Stride alone.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { LightMyRequestResponse } from 'fastify';
import type { Browser as Chromium } from 'playwright-core';
import { browserUnavailable, launchBrowser, screenshotPath } from '../support/browser.js';
import { rendererStyles } from '../../src/http/api-reference.js';
import { createTestApp } from '../support/app.js';
import { createAccount } from '../../src/domain/users.js';
import { registerApp } from '../../src/domain/apps.js';
import { ALL_SCOPES } from '../../src/domain/scopes.js';
import { freePort } from '../support/cli.js';
import { createFixture, createOAuthTestApp, encodeForm, REDIRECT_URI, obtainTokens, type Fixture, type Tokens } from '../oauth/flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, userWithToken } from '../support/tokens.js';
import { confidentialApp, tokenOf } from '../support/fitbit-subscriber.js';
import { setSubscriber } from '../../src/webhooks/fitbit-subscriber.js';
import type { TestApp } from '../support/app.js';
import { statusOf } from '../../src/http/openapi-answers.js';
import type { ErrorCode } from '../../src/errors.js';

const FITBIT_PATH = /^\/1(\.2)?\/user\//;

cheapPasswordHashing();

/** Screenshots of /docs for people to look at (test-artifacts/docs/), when TEST_SCREENSHOTS is set. */
const SCREENSHOTS = (process.env.TEST_SCREENSHOTS ?? '') !== '';

interface Operation {
  requestBody?: { content: Record<string, { schema: object }> };
  parameters?: Array<{ in: string; name: string; schema: object }>;
  responses: Record<string, { description: string; content?: Record<string, { schema: object; examples?: Record<string, { value: { error: string } }> }> }>;
  security?: Array<Record<string, string[]>>;
  deprecated?: boolean;
  description?: string;
}
interface Document {
  openapi: string;
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; securitySchemes: Record<string, { type: string; flows?: { authorizationCode: { authorizationUrl: string; tokenUrl: string; scopes: Record<string, string> } } }> };
}

describe('the OpenAPI document', () => {
  let t: TestApp;
  let fixture: Fixture;
  let tokens: Tokens;
  let fullToken: string;
  let doc: Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const checked: string[] = [];

  before(async () => {
    t = await createOAuthTestApp('sqlite', { WEBHOOK_ALLOW_PRIVATE: 'true', REGISTRATION: 'open', REGISTRATION_OWNER: 'openapi-operator@example.com' });
    fixture = await createFixture(t);
    await createAccount(t.database.stores.users, t.clock, { email: 'openapi-operator@example.com', password: 'correct horse battery', displayName: 'Operator' });
    tokens = await obtainTokens(t, fixture);
    fullToken = (await userWithToken(t)).token;
    doc = (await t.app.inject('/openapi.json')).json() as Document;
    // The schemas' own references (#/components/schemas/…) resolve against the document.
    ajv.addSchema({ $id: 'doc', components: doc.components });
  });
  after(() => t.close());

  /** The operation of `method` on the path template that matches `url`. */
  function operation(method: string, url: string): Operation {
    const path = url.split('?')[0]!.replace(/\/$/, '');
    const template = Object.keys(doc.paths).find((candidate) => {
      const pattern = new RegExp(`^${candidate.replace(/\/$/, '').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      return pattern.test(path);
    });
    assert.ok(template, `no path of the document matches ${path}`);
    const found = doc.paths[template]?.[method.toLowerCase()];
    assert.ok(found, `the document has no ${method} ${template}`);
    return found;
  }

  /** `calls`, run by whichever test asks first; the others get the same outcome. */
  function once(calls: () => Promise<void>): () => Promise<void> {
    let running: Promise<void> | undefined;
    return () => (running ??= calls());
  }

  /** Stride's `error`, or on the Fitbit-compatible paths the `errorType` of Fitbit's shape. */
  const errorCodeOf = (body: unknown) => (body as { error?: string }).error ?? (body as { errors: Array<{ errorType: string }> }).errors[0]!.errorType;

  const resolve = (schema: object) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as object;

  /** Asserts that the answer's status is declared for its route and its body matches the schema. */
  function matches(method: string, url: string, response: LightMyRequestResponse): void {
    const declared = operation(method, url).responses[String(response.statusCode)];
    assert.ok(declared, `${method} ${url} answered ${response.statusCode}, which the document does not declare`);
    const json = declared.content?.['application/json'];
    const schema = json?.schema;
    if (response.statusCode >= 400 && schema !== undefined) {
      // The reference shows the code a program should test for: the one really answered is among the examples.
      const code = errorCodeOf(response.json());
      const examples = Object.values(json?.examples ?? {}).map((example) => errorCodeOf(example.value));
      assert.ok(examples.includes(code), `${method} ${url} ${response.statusCode} answered ${code}; the examples show ${examples.join(', ')}`);
    }
    if (schema === undefined) {
      assert.equal(response.body, '', `${method} ${url} ${response.statusCode} declares no body`);
    } else {
      const validate = ajv.compile(resolve(schema));
      assert.ok(validate(response.json()), `${method} ${url} ${response.statusCode}: ${ajv.errorsText(validate.errors)} in ${response.body.slice(0, 300)}`);
    }
    checked.push(`${method} ${url.split('?')[0]} ${response.statusCode}`);
  }

  async function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, options: { headers?: Record<string, string>; json?: unknown; form?: Record<string, string> } = {}) {
    const response = await t.app.inject({
      method,
      url,
      headers: {
        ...options.headers,
        ...(options.json !== undefined && { 'content-type': 'application/json' }),
        ...(options.form !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(options.json !== undefined && { payload: JSON.stringify(options.json) }),
      ...(options.form !== undefined && { payload: encodeForm(options.form) }),
    });
    matches(method, url, response);
    return response;
  }

  it('is valid OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });

  it('lists the API, and none of the pages', () => {
    for (const path of ['/v1/users/me', '/v1/users/me/activities/steps/', '/v1/users/me/activities/distance/', '/v1/users/me/activities/calories/', '/v1/users/me/heartrate/', '/v1/users/me/sleep/', '/v1/users/me/sleep/{id}', '/v1/users/me/body/weight/', '/v1/users/me/body/weight/{id}', '/v1/users/me/summary/daily/', '/v1/events', '/v1/webhooks', '/oauth2/token', '/oauth2/device_authorization', '/oauth2/revoke', '/oauth2/introspect', '/.well-known/oauth-authorization-server']) {
      assert.ok(doc.paths[path], `${path} is missing`);
    }
    for (const path of Object.keys(doc.paths)) assert.doesNotMatch(path, /^\/(login|signup|logout|dashboard|account|demo|docs|openapi)/);
  });

  it('describes the authorization endpoint, a page, with its parameters and redirects', () => {
    const authorize = doc.paths['/oauth2/authorize']?.get as Operation & { parameters: Array<{ name: string; required: boolean }> };
    assert.ok(authorize, 'GET /oauth2/authorize is missing');
    assert.deepEqual(authorize.parameters.map((parameter) => parameter.name).sort(), ['client_id', 'code_challenge', 'code_challenge_method', 'prompt', 'redirect_uri', 'request_uri', 'response_type', 'scope', 'state']);
    assert.match(authorize.responses['302']!.description, /code.*state.*iss/s);
    assert.ok(doc.paths['/oauth2/par']?.post && doc.paths['/oauth2/device_authorization']?.post && doc.paths['/oauth2/register']?.post && doc.paths['/oauth2/register/{client_id}']?.put);
  });

  it('offers the authorization code flow with PKCE, with the scopes the routes demand', () => {
    const oauth = doc.components.securitySchemes.oauth!;
    assert.equal(oauth.type, 'oauth2');
    const flow = oauth.flows!.authorizationCode as { authorizationUrl: string; tokenUrl: string; scopes: Record<string, string>; 'x-usePkce'?: string };
    assert.equal(flow.authorizationUrl, 'http://stride.test/oauth2/authorize');
    assert.equal(flow.tokenUrl, 'http://stride.test/oauth2/token');
    assert.equal(flow['x-usePkce'], 'SHA-256');
    assert.deepEqual(Object.keys(flow.scopes), ['read_profile', 'write_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body']);
    assert.deepEqual(doc.paths['/v1/users/me/activities/steps/']!.post!.security![0], { oauth: ['write_activity'] });
    assert.deepEqual(doc.paths['/v1/users/me/heartrate/']!.get!.security![0], { oauth: ['read_heartrate'] });
    assert.deepEqual(doc.paths['/v1/users/me/summary/daily/']!.get!.security![0], { oauth: [] }, 'any token reads the summary');
    assert.ok(!JSON.stringify(doc.paths['/oauth2/register/{client_id}']).includes('"oauth"'), 'a registration access token is not an OAuth token of a person');
  });

  it('describes a success answer of every operation, and marks /users as the alias', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const successes = Object.entries(operation.responses).filter(([status]) => /^2/.test(status));
        assert.ok(successes.length > 0, `${method} ${path} has no success answer`);
        for (const [status, answer] of successes) {
          assert.ok(answer.description.length > 10 && answer.description !== 'Default Response', `${method} ${path} ${status}: "${answer.description}"`);
        }
      }
    }
    for (const method of ['get', 'put']) {
      assert.equal(doc.paths['/users']![method]!.deprecated, true);
      assert.match(doc.paths['/users']![method]!.description!, /alias of `\/v1\/users\/me`/);
    }
  });

  it('gives each error answer examples whose codes are answered with that status', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, answer] of Object.entries(operation.responses)) {
          const json = answer.content?.['application/json'];
          if (Number(status) < 400 || !json) continue;
          const codes = Object.values(json.examples ?? {}).map((example) => errorCodeOf(example.value));
          assert.ok(codes.length > 0, `${method} ${path} ${status} has no example`);
          if (FITBIT_PATH.test(path)) continue; // Fitbit's error types, checked against real answers below
          for (const code of codes) assert.ok(statusOf(code as ErrorCode, Number(status)), `${method} ${path}: ${code} is never answered with ${status}`);
        }
      }
    }
    const codesOf = (path: string, method: string, status: number) => Object.keys(doc.paths[path]![method]!.responses[status]!.content!['application/json']!.examples!);
    assert.deepEqual(codesOf('/v1/users/me', 'get', 401), ['invalid_token', 'invalid_dpop_proof', 'use_dpop_nonce']);
    assert.deepEqual(codesOf('/v1/users/me', 'get', 403), ['insufficient_scope']);
    assert.deepEqual(codesOf('/v1/events', 'get', 401), ['invalid_client']);
    assert.deepEqual(codesOf('/oauth2/token', 'post', 401), ['invalid_client']);
    assert.deepEqual(codesOf('/v1/users/me/sleep/{id}', 'delete', 404), ['not_found']);
    assert.deepEqual(codesOf('/v1/users/me/sleep/', 'post', 409), ['conflict']);
    assert.deepEqual(codesOf('/v1/users/me', 'get', 429), ['rate_limited']);
    assert.deepEqual(codesOf('/readyz', 'get', 503), ['temporarily_unavailable']);
    assert.ok(codesOf('/oauth2/token', 'post', 400).includes('authorization_pending'));
    assert.ok(codesOf('/oauth2/register', 'post', 400).includes('invalid_redirect_uri'));
  });

  it('links the guides, which Stride serves', async () => {
    for (const file of ['oauth.md', 'api.md', 'webhooks.md']) {
      assert.ok(doc.info.description.includes(`(http://stride.test/docs/guides/${file})`), file);
      const guide = await t.app.inject(`/docs/guides/${file}`);
      assert.equal(guide.statusCode, 200);
      assert.match(guide.headers['content-type'] as string, /^text\/plain; charset=utf-8/);
      assert.match(guide.body, /^# /);
    }
    for (const other of ['SECURITY.md', '..%2Fpackage.json', 'decisions%2F0001-own-migration-runner.md']) {
      assert.equal((await t.app.inject(`/docs/guides/${other}`)).statusCode, 404, other);
    }
  });

  const resourceApiAnswers = once(async () => {
    const steps = '/v1/users/me/activities/steps/';
    await call('GET', '/v1/users/me', { headers: bearer(tokens.access_token) });
    await call('GET', '/v1/users/me', { headers: bearer('sat_unknown') });
    await call('GET', '/v1/users/me');
    await call('PUT', '/v1/users/me', { headers: bearer(fullToken), json: { daily_step_goal: 12000, stride_length_cm: null } });
    await call('PUT', '/v1/users/me', { headers: bearer(fullToken), json: { id: 'mine' } });
    await call('PUT', '/v1/users/me', { headers: bearer(tokens.access_token), json: { daily_step_goal: 1 } });
    await call('POST', steps, { headers: bearer(tokens.access_token), json: { samples: [{ start_time: 1_700_000_040, value: 12 }] } });
    await call('POST', steps, { headers: bearer(tokens.access_token), json: { samples: [{ start_time: 1_700_000_041, value: 12 }] } });
    await call('GET', `${steps}?start_time=1700000000&end_time=1700086400&granularity=hour`, { headers: bearer(tokens.access_token) });
    await call('GET', `${steps}?granularity=fortnight`, { headers: bearer(tokens.access_token) });
    await call('DELETE', `${steps}?start_time=1700000000&end_time=1700086400`, { headers: bearer(fullToken) });
    await call('DELETE', `${steps}?start_time=1700000000`, { headers: bearer(fullToken) });
    for (const metric of ['distance', 'calories']) {
      const path = `/v1/users/me/activities/${metric}/`;
      await call('POST', path, { headers: bearer(fullToken), json: { samples: [{ start_time: 1_700_000_040, value: 12.5 }, { start_time: 1_700_000_100, value: 3 }] } });
      await call('POST', path, { headers: bearer(fullToken), json: { samples: [{ start_time: 1_700_000_040, value: 3, extra: 1 }] } });
      await call('GET', `${path}?start_time=1700000000&end_time=1700086400&granularity=hour&timezone=Asia/Kolkata`, { headers: bearer(fullToken) });
      await call('GET', `${path}?granularity=fortnight`, { headers: bearer(fullToken) });
      await call('DELETE', `${path}?start_time=1700000000&end_time=1700086400`, { headers: bearer(fullToken) });
      await call('DELETE', `${path}?start_time=1700000000&end_time=1800000000`, { headers: bearer(fullToken) });
    }
    const heartRate = '/v1/users/me/heartrate/';
    await call('POST', heartRate, { headers: bearer(fullToken), json: { samples: [{ time: 1_700_000_041, bpm: 64 }, { time: 1_700_000_042, bpm: 66 }] } });
    await call('POST', heartRate, { headers: bearer(fullToken), json: { samples: [{ time: 1_700_000_041, bpm: 251 }] } });
    await call('POST', heartRate, { headers: bearer(tokens.access_token), json: { samples: [] } });
    for (const granularity of ['minute', 'hour', 'day']) {
      await call('GET', `${heartRate}?start_time=1699999000&end_time=1700003000&granularity=${granularity}&timezone=Europe/Berlin`, { headers: bearer(fullToken) });
    }
    await call('GET', `${heartRate}?granularity=fortnight`, { headers: bearer(fullToken) });
    await call('DELETE', `${heartRate}?start_time=1700000000&end_time=1700000060`, { headers: bearer(fullToken) });
    await call('DELETE', `${heartRate}?start_time=1700000000`, { headers: bearer(fullToken) });

    const sleep = '/v1/users/me/sleep/';
    const night = { start_time: 1_700_000_000, end_time: 1_700_007_200, stages: [{ stage: 'deep', start_time: 1_700_000_000, end_time: 1_700_003_600 }, { stage: 'awake', start_time: 1_700_003_600, end_time: 1_700_007_200 }] };
    const session = (await call('POST', sleep, { headers: bearer(fullToken), json: night })).json() as { id: string };
    await call('POST', sleep, { headers: bearer(fullToken), json: { ...night, start_time: 1_700_000_060 } });
    await call('POST', sleep, { headers: bearer(fullToken), json: { ...night, stages: [] } });
    await call('GET', `${sleep}?start_date=2023-11-14&end_date=2023-11-15&timezone=Europe/Berlin`, { headers: bearer(fullToken) });
    await call('GET', `${sleep}?start_date=2023-11-31`, { headers: bearer(fullToken) });
    await call('GET', sleep, { headers: bearer(tokens.access_token) });
    await call('DELETE', `${sleep}${session.id}`, { headers: bearer(fullToken) });
    await call('DELETE', `${sleep}${session.id}`, { headers: bearer(fullToken) });

    const weight = '/v1/users/me/body/weight/';
    const measured = (await call('POST', weight, { headers: bearer(fullToken), json: { time: 1_700_000_000, kg: 70.15, fat_percent: 21.5 } })).json() as { id: string };
    await call('POST', weight, { headers: bearer(fullToken), json: { time: 1_700_000_000, kg: 70.155 } });
    await call('GET', `${weight}?start_date=2023-11-14&end_date=2023-11-14`, { headers: bearer(fullToken) });
    await call('GET', `${weight}?start_date=2020-01-01&end_date=2023-11-14`, { headers: bearer(fullToken) });
    await call('DELETE', `${weight}${measured.id}`, { headers: bearer(tokens.access_token) });
    await call('DELETE', `${weight}${measured.id}`, { headers: bearer(fullToken) });
    await call('DELETE', `${weight}${measured.id}`, { headers: bearer(fullToken) });

    const summary = '/v1/users/me/summary/daily/';
    await call('GET', `${summary}?start_date=2023-11-13&end_date=2023-11-15&timezone=Asia/Kolkata`, { headers: bearer(fullToken) });
    // With a maximum heart rate the zones are objects, not null.
    await call('PUT', '/v1/users/me', { headers: bearer(fullToken), json: { birth_year: 1990, max_heart_rate: 185 } });
    await call('GET', `${summary}?start_date=2023-11-13&end_date=2023-11-15&timezone=Europe/Berlin`, { headers: bearer(fullToken) });
    await call('PUT', '/v1/users/me', { headers: bearer(fullToken), json: { birth_year: null, max_heart_rate: null } });
    await call('GET', summary, { headers: bearer(tokens.access_token) });
    await call('GET', `${summary}?start_date=2023-11-31`, { headers: bearer(fullToken) });
    await call('GET', summary, {});
  });
  it('declares every answer the resource API gives, errors included', () => resourceApiAnswers());

  /** Every route of the Fitbit-compatible face, with successes and errors. */
  const fitbitAnswers = once(async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const path of [
      '/1/user/-/profile.json',
      '/1/user/-/activities/steps/date/2023-11-15/7d.json',
      '/1/user/-/activities/heart/date/2023-11-15/1d.json',
      '/1/user/-/activities/active-zone-minutes/date/2023-11-15/7d.json',
      '/1/user/-/activities/minutesVeryActive/date/2023-11-15/7d.json',
      '/1/user/-/activities/date/2023-11-15.json',
      '/1/user/-/activities/steps/date/2023-11-31/7d.json',
      '/1/user/-/activities/floors/date/2023-11-15/7d.json',
      '/1/user/-/activities/distance/date/2023-11-14/1d/15min.json',
      '/1/user/-/activities/heart/date/2023-11-14/1d/1min.json',
      '/1/user/-/activities/steps/date/2023-11-14/1d/1min/time/08:00/09:00.json',
      '/1/user/-/activities/steps/date/2023-11-14/1d/1min/time/08:00/29:00.json',
      '/1.2/user/-/sleep/date/2023-11-14.json',
      '/1.2/user/-/sleep/date/2023-11-13/2023-11-15.json',
      '/1/user/-/sleep/date/2023-11-14.json',
      '/1/user/-/sleep/date/2023-11-13/2023-11-15.json',
      '/1/user/-/body/log/weight/date/2023-11-14.json',
      '/1/user/-/body/log/weight/date/2023-11-14/7d.json',
      '/1/user/-/body/weight/date/2023-11-14/7d.json',
      '/1/user/-/body/fat/date/2023-11-14/7d.json',
      '/1/user/-/devices.json',
    ]) {
      await call('GET', path, { headers: bearer(fullToken) });
    }
    await call('GET', '/1/user/someone-else/profile.json', { headers: bearer(fullToken) });
    await call('GET', '/1/user/-/activities/heart/date/2023-11-15/1d.json', { headers: bearer(tokens.access_token) });
    await call('GET', '/1/user/-/profile.json', { headers: bearer('sat_unknown') });
    const sleep = (await call('POST', '/1.2/user/-/sleep.json', { headers: { ...bearer(fullToken), ...form }, form: { date: '2023-11-14', startTime: '23:00', duration: '3600000' } })).json() as { sleep: { logId: string } };
    await call('POST', '/1.2/user/-/sleep.json', { headers: { ...bearer(fullToken), ...form }, form: { date: '2023-11-14', startTime: '23:30', duration: '3600000' } });
    await call('POST', '/1/user/-/sleep.json', { headers: bearer(fullToken), form: { date: '2023-11-13', startTime: '25:00', duration: '3600000' } });
    await call('DELETE', `/1.2/user/-/sleep/${sleep.sleep.logId}.json`, { headers: bearer(fullToken) });
    await call('DELETE', `/1/user/-/sleep/${sleep.sleep.logId}.json`, { headers: bearer(fullToken) });
    const weight = (await call('POST', '/1/user/-/body/log/weight.json', { headers: bearer(fullToken), form: { weight: '70.5', date: '2023-11-14', time: '07:00:00' } })).json() as { weightLog: { logId: string } };
    await call('POST', '/1/user/-/body/log/weight.json', { headers: bearer(fullToken), form: { weight: 'heavy', date: '2023-11-14' } });
    await call('DELETE', `/1/user/-/body/log/weight/${weight.weightLog.logId}.json`, { headers: bearer(fullToken) });
    await call('DELETE', `/1/user/-/body/log/weight/${weight.weightLog.logId}.json`, { headers: bearer(fullToken) });
    // Subscriptions, by an app with a Fitbit-compatible subscriber.
    const { app: mover, clientSecret } = await confidentialApp(t, await createUser(t));
    await setSubscriber(t.app.ctx, mover, { url: 'https://hooks.example.com/fitbit', clientSecret });
    const subscriber = bearer(await tokenOf(t, mover, await createUser(t), ALL_RESOURCE_SCOPES));
    for (const [method, path] of [
      ['POST', '/1/user/-/activities/apiSubscriptions/1-activities.json'],
      ['POST', '/1/user/-/activities/apiSubscriptions/1-activities.json'],
      ['POST', '/1/user/-/activities/apiSubscriptions/2-activities.json'],
      ['POST', '/1/user/-/apiSubscriptions/3.json'],
      ['POST', '/1/user/-/foods/apiSubscriptions/4.json'],
      ['GET', '/1/user/-/apiSubscriptions.json'],
      ['GET', '/1/user/-/activities/apiSubscriptions.json'],
      ['GET', '/1/user/-/activities/apiSubscriptions/1-activities.json'],
      ['GET', '/1/user/-/apiSubscriptions/3.json'],
      ['DELETE', '/1/user/-/activities/apiSubscriptions/1-activities.json'],
      ['DELETE', '/1/user/-/apiSubscriptions/3.json'],
      ['DELETE', '/1/user/-/apiSubscriptions/3.json'],
    ] as const) {
      await call(method, path, { headers: subscriber });
    }
  });
  it('declares every answer the Fitbit-compatible face gives, in Fitbit\'s error shape', () => fitbitAnswers());

  const clientEndpointAnswers = once(async () => {
    const client = { client_id: fixture.app.clientId, client_secret: fixture.secret };
    const basic = { authorization: `Basic ${Buffer.from(`${fixture.app.clientId}:${fixture.secret}`).toString('base64')}` };
    await call('GET', '/.well-known/oauth-authorization-server');
    await call('POST', '/oauth2/token', { form: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client } });
    await call('POST', '/oauth2/token', { form: { grant_type: 'refresh_token', refresh_token: 'srt_nothing', ...client } });
    await call('POST', '/oauth2/token', { form: { grant_type: 'password', ...client } });
    await call('POST', '/oauth2/token', { form: { grant_type: 'refresh_token', refresh_token: 'x', client_id: fixture.app.clientId, client_secret: 'wrong' } });
    await call('POST', '/oauth2/introspect', { form: { token: tokens.access_token, ...client } });
    await call('POST', '/oauth2/introspect', { form: { token: 'sat_unknown', ...client } });
    await call('POST', '/oauth2/revoke', { form: { token: 'sat_unknown', ...client } });
    await call('POST', '/oauth2/revoke', { form: { ...client } });
    await call('POST', '/oauth2/device_authorization', { form: { ...client } });
    await call('POST', '/oauth2/device_authorization', { form: { client_id: 'sc_nobody' } });
    await call('POST', '/oauth2/device_authorization', { form: { scope: 'read_everything', ...client } });
    await call('POST', '/oauth2/token', { form: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'sdc_x', ...client } });
    const pushed = { response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'read_profile' };
    await call('POST', '/oauth2/par', { form: { ...pushed, ...client } });
    await call('POST', '/oauth2/par', { form: { ...pushed, scope: 'read_minds', ...client } });
    await call('POST', '/oauth2/par', { form: { ...pushed, client_id: fixture.app.clientId, client_secret: 'wrong' } });

    const metadata = { redirect_uris: ['https://registered.example/cb'], client_name: 'Registered', scope: 'read_profile' };
    const registered = (await call('POST', '/oauth2/register', { json: metadata })).json() as { client_id: string; registration_access_token: string };
    await call('POST', '/oauth2/register', { json: { ...metadata, redirect_uris: ['http://registered.example/cb'] } });
    const management = `/oauth2/register/${registered.client_id}`;
    const rat = bearer(registered.registration_access_token);
    await call('GET', management, { headers: rat });
    await call('GET', management, { headers: bearer('sra_wrong') });
    await call('PUT', management, { headers: rat, json: { ...metadata, client_id: registered.client_id, client_name: 'Renamed' } });
    await call('PUT', management, { headers: rat, json: { ...metadata, client_id: registered.client_id, scope: 'read_minds' } });
    await call('DELETE', management, { headers: rat });
    await call('DELETE', management, { headers: rat });

    await call('GET', '/v1/events?limit=5', { headers: basic });
    await call('GET', '/v1/events?limit=0', { headers: basic });
    await call('GET', '/v1/events');
    const added = await call('POST', '/v1/webhooks', { headers: basic, json: { url: 'http://127.0.0.1:9/hooks', events: ['steps.updated'] } });
    const id = (added.json() as { id: string }).id;
    await call('POST', '/v1/webhooks', { headers: basic, json: { url: 'http://127.0.0.1:9/hooks', events: ['nothing.happened'] } });
    await call('GET', '/v1/webhooks', { headers: basic });
    await call('PATCH', `/v1/webhooks/${id}`, { headers: basic, json: { state: 'paused' } });
    await call('POST', `/v1/webhooks/${id}/rotate-secret`, { headers: basic });
    await call('DELETE', `/v1/webhooks/${id}`, { headers: basic });
    await call('DELETE', `/v1/webhooks/${id}`, { headers: basic });
    await call('GET', '/healthz');
    await call('GET', '/readyz');
  });
  it('declares every answer of the client endpoints and the feed', () => clientEndpointAnswers());

  const inputSchemaAnswers = once(async () => {
    const bodySchema = (method: string, url: string) => {
      const content = operation(method, url).requestBody!.content;
      return ajv.compile(resolve(Object.values(content)[0]!.schema));
    };
    const cases: Array<{ method: 'PUT' | 'POST'; url: string; body: unknown; token: string }> = [
      { method: 'PUT', url: '/v1/users/me', body: { daily_step_goal: 8000 }, token: fullToken },
      { method: 'PUT', url: '/v1/users/me', body: { daily_step_goal: -1 }, token: fullToken },
      { method: 'PUT', url: '/v1/users/me', body: { stride_length_cm: 10 }, token: fullToken },
      { method: 'PUT', url: '/v1/users/me', body: { created_at: 5 }, token: fullToken },
      { method: 'PUT', url: '/v1/users/me', body: { birth_year: 1899 }, token: fullToken },
      { method: 'PUT', url: '/v1/users/me', body: { max_heart_rate: 231 }, token: fullToken },
      { method: 'PUT', url: '/v1/users/me', body: { max_heart_rate: 99.5 }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/steps/', body: { samples: [{ start_time: 1_700_000_040, value: 1000 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/steps/', body: { samples: [{ start_time: 1_700_000_040, value: 1001 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/steps/', body: { samples: [{ start_time: 1_700_000_040, value: 1, extra: true }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/steps/', body: { samples: [] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/heartrate/', body: { samples: [{ time: 1_700_000_040, bpm: 250 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/heartrate/', body: { samples: [{ time: 1_700_000_040, bpm: 24 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/heartrate/', body: { samples: [{ time: 1_700_000_040, bpm: 60, extra: 1 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/heartrate/', body: { samples: [{ time: '1700000040', bpm: 60 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/sleep/', body: { start_time: 1_600_000_000, end_time: 1_600_000_060, stages: [{ stage: 'rem', start_time: 1_600_000_000, end_time: 1_600_000_060 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/sleep/', body: { start_time: 1_600_100_000, end_time: 1_600_100_060, stages: [{ stage: 'nap', start_time: 1_600_100_000, end_time: 1_600_100_060 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/sleep/', body: { start_time: 1_600_100_000, end_time: 1_600_100_060 }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/body/weight/', body: { time: 1_600_000_000, kg: 400 }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/body/weight/', body: { time: 1_600_000_000, kg: 400.5 }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/body/weight/', body: { time: 1_600_000_000, kg: 80, fat_percent: null }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/body/weight/', body: { time: 1_600_000_000, kg: 80, fat_percent: 76 }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/distance/', body: { samples: [{ start_time: 1_700_000_040, value: 2000 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/distance/', body: { samples: [{ start_time: 1_700_000_040, value: 2.5 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/calories/', body: { samples: [{ start_time: 1_700_000_040, value: 0.5 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/calories/', body: { samples: [{ start_time: 1_700_000_040, value: 0.25 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/calories/', body: { samples: [{ start_time: 1_700_000_040, value: 100.5 }] }, token: fullToken },
      { method: 'POST', url: '/v1/users/me/activities/calories/', body: { samples: [{ start_time: 1_700_000_070, value: 1 }] }, token: fullToken },
    ];
    for (const { method, url, body, token } of cases) {
      const valid = bodySchema(method, url)(body);
      const response = await call(method, url, { headers: bearer(token), json: body });
      assert.equal(response.statusCode === 200, valid, `${method} ${url} ${JSON.stringify(body)}: schema says ${valid}, the route answered ${response.statusCode}`);
    }
  });
  it('has input schemas that refuse what the routes refuse, and accept what they accept', () => inputSchemaAnswers());

  it('covered each route of the API in the tests above', async () => {
    // The calls of those tests, made here if they have not run (this test run alone).
    await resourceApiAnswers();
    await fitbitAnswers();
    await clientEndpointAnswers();
    await inputSchemaAnswers();
    const routes = new Set(checked.map((entry) => entry.split(' ').slice(0, 2).join(' ')));
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (path === '/users') continue; // the same handlers as /v1/users/me
      if (path === '/oauth2/authorize') continue; // a page: test/oauth/ and the browser flows call it
      for (const method of Object.keys(operations)) {
        const concrete = [...routes].some((route) => {
          const [m, url] = route.split(' ');
          return m === method.toUpperCase() && new RegExp(`^${path.replace(/\/$/, '').replace(/\{[^}]+\}/g, '[^/]+')}/?$`).test(url!);
        });
        assert.ok(concrete, `${method.toUpperCase()} ${path} was never called`);
      }
    }
  });

  it('serves /docs from Stride alone, with a CSP that adds styles only', async () => {
    const page = await t.app.inject('/docs');
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    const nonce = /<meta property="csp-nonce" content="([^"]+)">/.exec(page.body)![1]!;
    const pages = String((await t.app.inject('/login')).headers['content-security-policy']);
    assert.equal(page.headers['content-security-policy'], `${pages};${rendererStyles(nonce)}`);
    assert.doesNotMatch(String(page.headers['content-security-policy']), /script-src|unsafe-eval|https?:/, 'scripts stay the pages\' own: this server, no inline script, no eval');
    const again = await t.app.inject('/docs/');
    assert.notEqual(/nonce-([^' ]+)/.exec(String(again.headers['content-security-policy']))![1], nonce, 'a nonce per answer');
    const scripts = [...page.body.matchAll(/<script([^>]*)>/g)].map((match) => match[1]!);
    assert.deepEqual(scripts, [' id="reference-configuration" type="application/json"', ' src="/docs/js/scalar.js"', ' src="/docs/reference.js"'], 'no inline script runs');
    for (const asset of ['/docs/js/scalar.js', '/docs/reference.js']) {
      const loaded = await t.app.inject({ url: asset, headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(loaded.statusCode, 200, asset);
      assert.match(loaded.headers['content-type'] as string, /javascript/);
    }
    const bundle = await t.app.inject({ url: '/docs/js/scalar.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(bundle.headers['content-encoding'], 'gzip');
    const plain = await t.app.inject('/docs/js/scalar.js');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(gunzipSync(bundle.rawPayload).toString(), plain.body);
    assert.ok(bundle.rawPayload.length < plain.rawPayload.length / 3, `${bundle.rawPayload.length} bytes compressed`);
    // As the flow's redirect URI, the page runs nothing: the window's URL keeps the answer until
    // the renderer that opened it has read it.
    for (const answer of ['code=abc&state=xyz&iss=http%3A%2F%2Fstride.test', 'error=access_denied&state=xyz']) {
      const back = await t.app.inject(`/docs?${answer}`);
      assert.equal(back.statusCode, 200);
      assert.equal(back.headers['cache-control'], 'no-store');
      assert.doesNotMatch(back.body, /<script/, answer);
      assert.match(back.body, /<a href="\/docs">open the reference<\/a>/);
    }
    const configuration = JSON.parse(/<script id="reference-configuration" type="application\/json">(.*?)<\/script>/s.exec(page.body)![1]!) as Record<string, unknown>;
    assert.equal(configuration.url, '/openapi.json');
    assert.equal(configuration.withDefaultFonts, false, 'no fonts from fonts.scalar.com');
    assert.equal(configuration.telemetry, false);
    assert.match(JSON.stringify(configuration.authentication), /"x-scalar-redirect-uri":"http:\/\/stride\.test\/docs"/);
  });
});

describe('the API reference in a browser', { skip: browserUnavailable() ?? false }, () => {
  let t: TestApp;
  let browser: Chromium;
  let origin: string;
  before(async () => {
    // The page's links and its OAuth flow go to the public URL: here, where the server listens.
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', { PUBLIC_URL: origin });
    await t.app.listen({ host: '127.0.0.1', port });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('renders on a phone in dark mode and on a wide light screen, asking nothing of another host; its OAuth flow gets a token', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    // The renderer parses 5 MB of JavaScript per page (the popup too): on a busy machine that alone
    // can pass Playwright's 30 s default.
    context.setDefaultTimeout(120_000);
    const page = await context.newPage();
    const violations: string[] = [];
    const errors: string[] = [];
    const elsewhere: string[] = [];
    await page.exposeFunction('reportViolation', (violation: string) => violations.push(violation));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        void (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.effectiveDirective} ${event.blockedURI}`);
      });
    });
    page.on('pageerror', (error) => errors.push(error.message));
    context.on('request', (request) => {
      if (!request.url().startsWith(`${origin}/`)) elsewhere.push(request.url());
    });
    await page.goto(`${origin}/docs`);
    await page.getByRole('heading', { name: 'Stride API', level: 1 }).waitFor();
    assert.equal(await page.evaluate(() => document.body.classList.contains('dark-mode')), true, 'dark, as the system asks');
    const guide = page.getByRole('link', { name: 'Connecting an app (OAuth 2.0)' });
    assert.equal(await guide.getAttribute('href'), `${origin}/docs/guides/oauth.md`);
    const { width, screen } = await page.evaluate(() => ({ width: document.documentElement.scrollWidth, screen: window.innerWidth }));
    assert.ok(width <= screen, `${width} px wide on a ${screen} px screen`);
    if (SCREENSHOTS) await page.screenshot({ path: screenshotPath('docs/390-dark') });

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.waitForFunction(() => document.body.classList.contains('light-mode'));
    // The wide layout's sidebar, with the tags of the document.
    for (const tag of ['OAuth 2.0', 'Steps', 'Events and webhooks']) await page.getByText(tag, { exact: true }).first().waitFor();
    if (SCREENSHOTS) await page.screenshot({ path: screenshotPath('docs/1280-light') });

    // A developer's public app with the page as its redirect URI, as the document's description says.
    const developer = await createAccount(t.database.stores.users, t.clock, { email: 'docs-developer@example.com', password: 'correct horse battery', displayName: 'Docs Developer' });
    const registered = await registerApp(t.database.stores.apps, t.clock, developer.id, { name: 'Trying the API', redirectUris: [`${origin}/docs`], scopes: [...ALL_SCOPES], isPublic: true });
    const tokenAnswers: Array<{ status: number; body: string }> = [];
    context.on('response', (response) => {
      if (response.url() === `${origin}/oauth2/token`) void response.text().then((body) => tokenAnswers.push({ status: response.status(), body }));
    });
    await page.getByRole('combobox', { name: 'Client ID' }).first().click();
    await page.keyboard.type(registered.app.clientId);
    await page.getByText('Select All').first().click();
    const [popup] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Authorize' }).first().click()]);
    await popup.getByLabel('Email').fill('docs-developer@example.com');
    await popup.getByLabel('Password').fill('correct horse battery');
    await popup.getByRole('button', { name: 'Sign in' }).click();
    // The reference reads the answer from the window's URL and closes it, at once on a quick
    // machine: the wait starts before the click, or the close could come before it and never be
    // seen. If it stays open, say where it stopped.
    const closed = popup.waitForEvent('close');
    await popup.getByRole('button', { name: 'Allow' }).click({ noWaitAfter: true });
    await closed.catch(async (error: Error) => {
      throw new Error(`the window stayed open at ${popup.url()} (${(await popup.textContent('body').catch(() => null))?.trim().slice(0, 200)}): ${error.message}`);
    });
    await page.getByRole('button', { name: 'Clear tokens' }).first().waitFor();
    assert.equal(tokenAnswers.length, 1);
    assert.equal(tokenAnswers[0]!.status, 200, tokenAnswers[0]!.body);
    const { access_token: accessToken } = JSON.parse(tokenAnswers[0]!.body) as { access_token: string };
    assert.equal((await t.app.inject({ url: '/v1/users/me', headers: { authorization: `Bearer ${accessToken}` } })).statusCode, 200, 'the token the page holds works');

    assert.deepEqual(errors, []);
    assert.deepEqual(elsewhere, []);
    // The one refusal: the bundle's validator probes whether it may compile code (new Function) and
    // does without when refused.
    assert.deepEqual([...new Set(violations)], ['script-src eval'], 'no style or script refused but the probe');
    await context.close();
  });
});
