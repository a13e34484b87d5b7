/**
 * Fuzzing the browser pages (src/web/routes.ts): sign-in, sign-up, sign-out, the account page and
 * its forms, the developer dashboard and its forms, the demo callback, `/` and the assets, with a
 * real session cookie and its CSRF token (or the pre-sign-in CSRF pair) mixed in.
 */
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { forEachDialect } from '../support/databases.js';
import { realValue } from './hostile.js';
import { newEmail, redirectUri, scopeList, timeZone } from './plausible.js';
import { createFuzzTarget, fuzz, type FuzzTarget } from './property.js';
import { pathParameter, requestsTo, type Route } from './requests.js';
import { cheapPasswordHashing } from '../support/passwords.js';

/** The fuzz world's account, and those the cases sign up, sign in at the cheap cost: no property here is about hashing. */
cheapPasswordHashing();

const returnTo = fc.constantFrom(
  '/account', '/dashboard', '/oauth2/authorize?client_id=x&redirect_uri=y', '//evil.example', '/\\evil.example', 'https://evil.example/',
  '/%2F%2Fevil.example', '/\t/evil.example', ' /account', '/account#x', '/./account', '/..//evil.example', 'javascript:alert(1)',
  '/€', '/café', '/\u202Eaccount', '/account?x=😀',
);

const csrf = realValue(['csrf']);
const preCsrf = realValue(['preCsrf']);
const page = { face: 'page', credentials: 'session' } as const;
const userCode = fc.oneof(
  fc.constantFrom('BCDF-GHJK', 'bcdfghjk', 'BCDF GHJK', 'AEIO-UAEI', 'BCDF-GHJ', '', '--------', 'ＢＣＤＦ-ＧＨＪＫ'),
  fc.string({ maxLength: 30 }),
);

const appForm = {
  form_id: fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 21, maxLength: 23 }),
  name: fc.constantFrom('Pace Coach', ' ', 'x'.repeat(101), '\u202Egnp.exe', 'Pace\u200BCoach', '<b>App</b>'),
  description: fc.constantFrom('', 'Counts steps.', 'line\nbreak\ttab', 'x'.repeat(1001)),
  website_url: fc.constantFrom('https://app.example', 'http://localhost:3000', 'javascript:alert(1)', 'ftp://app.example', ' https://app.example', 'https://'),
  redirect_uris: fc.array(redirectUri, { maxLength: 12 }).chain((uris) => fc.constantFrom('\n', '\r\n', ' ', ',').map((separator) => uris.join(separator))),
  scopes: scopeList,
  client_type: fc.constantFrom('public', 'confidential', ''),
  confirm_scope_change: fc.constantFrom('yes', 'no'),
  csrf_token: csrf,
};

const clientIdParameter = { clientId: pathParameter(['clientId', 'publicClientId']) };

export const WEB_ROUTES: Route[] = [
  { method: 'GET', path: '/', face: 'page', statuses: [302], credentials: 'none' },
  { method: 'GET', path: '/assets/stride.css', face: 'page', statuses: [200], credentials: 'none' },
  { method: 'GET', path: '/assets/copy.js', face: 'page', statuses: [200], credentials: 'none' },
  { ...page, method: 'GET', path: '/login', statuses: [200, 302], fields: { return_to: returnTo } },
  {
    method: 'POST',
    path: '/login',
    face: 'page',
    statuses: [303, 401, 403],
    fields: { email: realValue(['email']), password: realValue(['password']), return_to: returnTo, csrf_token: preCsrf },
    credentials: 'preSession',
    rateLimited: true,
  },
  { ...page, method: 'GET', path: '/signup', statuses: [200, 302], fields: { return_to: returnTo } },
  {
    method: 'POST',
    path: '/signup',
    face: 'page',
    statuses: [303, 400, 403, 409],
    fields: { email: fc.oneof(newEmail, realValue(['email'])), password: fc.constantFrom('long enough password', 'short', 'x'.repeat(257)), display_name: null, return_to: returnTo, csrf_token: preCsrf },
    credentials: 'preSession',
    rateLimited: true,
  },
  { ...page, method: 'POST', path: '/logout', statuses: [303, 403], fields: { csrf_token: csrf } },
  // The device grant's verification page (RFC 8628 §3.3): typed codes of every shape.
  { ...page, method: 'GET', path: '/device', statuses: [200, 302], fields: { user_code: userCode } },
  { ...page, method: 'POST', path: '/device', statuses: [200, 400, 403], fields: { csrf_token: csrf, user_code: userCode }, rateLimited: true },
  {
    ...page,
    method: 'POST',
    path: '/device/consent',
    statuses: [200, 400, 403],
    fields: { csrf_token: csrf, user_code: userCode, decision: fc.constantFrom('allow', 'deny', 'ALLOW', ''), granted_scope: scopeList },
    rateLimited: true,
  },
  { ...page, method: 'GET', path: '/account', statuses: [200, 302], fields: { saved: fc.constant('profile'), revoked: realValue(['appId', 'clientId']) } },
  {
    ...page,
    method: 'POST',
    path: '/account/profile',
    statuses: [303, 400, 403],
    fields: {
      display_name: null,
      timezone: timeZone,
      daily_step_goal: fc.oneof(fc.integer({ min: -1, max: 200_001 }).map(String), fc.constantFrom('', ' 8000 ', '8e3', '08000')),
      stride_length_cm: fc.oneof(fc.integer({ min: 29, max: 251 }).map(String), fc.constantFrom('', ' ', '70.5')),
      csrf_token: csrf,
    },
  },
  { ...page, method: 'POST', path: '/account/connected-apps/:appId/revoke', statuses: [303, 403], fields: { csrf_token: csrf }, params: { appId: pathParameter(['appId']) } },
  { ...page, method: 'GET', path: '/dashboard', statuses: [200, 302], fields: { deleted: fc.constant('1') } },
  { ...page, method: 'GET', path: '/dashboard/apps/new', statuses: [200, 302] },
  { ...page, method: 'POST', path: '/dashboard/apps', statuses: [200, 303, 400, 403], fields: appForm },
  {
    ...page,
    method: 'GET',
    path: '/dashboard/apps/:clientId',
    statuses: [200, 302, 404],
    fields: { saved: fc.constant('1'), ended: fc.integer({ min: -1, max: 3 }).map(String), registered: fc.constant('again') },
    params: clientIdParameter,
  },
  { ...page, method: 'POST', path: '/dashboard/apps/:clientId', statuses: [200, 303, 400, 403, 404], fields: appForm, params: clientIdParameter },
  { ...page, method: 'POST', path: '/dashboard/apps/:clientId/secret', statuses: [200, 303, 400, 403, 404], fields: { csrf_token: csrf }, params: clientIdParameter },
  { ...page, method: 'GET', path: '/dashboard/apps/:clientId/delete', statuses: [200, 302, 404], params: clientIdParameter },
  { ...page, method: 'POST', path: '/dashboard/apps/:clientId/delete', statuses: [303, 403, 404], fields: { csrf_token: csrf }, params: clientIdParameter },
  {
    method: 'GET',
    path: '/demo/callback',
    face: 'page',
    statuses: [200],
    fields: { code: realValue(['code']), state: null, error: fc.constantFrom('access_denied', 'invalid_request'), error_description: null, iss: fc.constant('http://stride.test') },
    credentials: 'none',
  },
];

/** Cases per database in `npm test`. */
const RUNS = 1000;

forEachDialect('fuzzing the pages', (dialect) => {
  let target: FuzzTarget;
  before(async () => {
    target = await createFuzzTarget(dialect);
  });
  after(() => target.t.close());

  it('answers every malformed, hostile or half-valid request within the error contract', async (context) => {
    await fuzz(context, target, requestsTo(WEB_ROUTES), RUNS);
  });
});
