/**
 * Fuzzing every id a route reads from its path, query or form: apps' client ids and ids, webhook
 * endpoints and their deliveries, test people, sessions, sleep sessions and weights, the event
 * feed's cursor. Each request is right in every part but its one id — a real session cookie and
 * its CSRF token, the app's client credentials, an access token or a registration access token —
 * and that id holds a NUL or another control character (U+0000–U+001F, U+007F), a lone surrogate
 * or a malformed escape, or runs to thousands of characters. An id that cannot be one names
 * nothing: each route must answer it as it answers an id it does not know (the route's `statuses`),
 * within the error contract (invariants.ts). PostgreSQL refuses a NUL in a text value, so an id
 * that reached a statement there answered 500.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { createAccount } from '../../src/domain/users.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { createFuzzTarget, fuzz, type FuzzTarget } from './property.js';
import { escape, type Encoding, type Fields, type RequestSpec, type Route } from './requests.js';
import { real, REDIRECT_URI, type RealName } from './world.js';

/** The fuzz world's account signs in at the cheap cost: no property here is about hashing. */
cheapPasswordHashing();

const REGISTRATION_OWNER = 'registrar@example.com';

/** A route and where its id goes: the path parameter `:id`, or a query or form field. */
interface IdRoute {
  method: Route['method'];
  path: string;
  id: { in: 'path' } | { in: 'query' | 'form'; name: string };
  /** The real id of the kind the route reads, for ids that are one but for a character. */
  kind: RealName | null;
  /** What it answers for an id that names nothing. */
  statuses: number[];
  face: Route['face'];
  credentials: 'session' | 'client' | 'bearer' | 'registration' | 'none';
  /** Its other fields, right. */
  fields?: Record<string, string | string[]>;
  json?: unknown;
}

const csrf = { csrf_token: real('csrf') };
const page = { face: 'page', credentials: 'session' } as const;
const appPage = `/dashboard/apps/${real('clientId')}`;
const endpointPage = `${appPage}/webhooks/:id`;
const webhookApi = { face: 'api', credentials: 'client', kind: 'endpointId', id: { in: 'path' }, statuses: [404] } satisfies Partial<IdRoute>;
const authorization = { response_type: 'code', client_id: real('clientId'), redirect_uri: REDIRECT_URI, scope: 'read_profile', state: 'st' };
/** The client endpoints, with the confidential app's secret beside the client id. */
const clientEndpoint = (path: string, fields: Record<string, string>): IdRoute => ({
  method: 'POST', path, face: 'api', credentials: 'none', kind: 'clientId', id: { in: 'form', name: 'client_id' }, statuses: [401], fields: { client_secret: real('clientSecret'), ...fields },
});

const ID_ROUTES: IdRoute[] = [
  // The pages of an app: its client id in the address.
  ...(['', '/created', '/delete', '/webhooks', '/connect-test-person'] as const).map((tail): IdRoute => ({ ...page, method: 'GET', path: `/dashboard/apps/:id${tail}`, kind: 'clientId', id: { in: 'path' }, statuses: [404] })),
  ...(['', '/secret', '/delete', '/webhooks'] as const).map((tail): IdRoute => ({ ...page, method: 'POST', path: `/dashboard/apps/:id${tail}`, kind: 'clientId', id: { in: 'path' }, statuses: [404], fields: csrf })),
  // A webhook endpoint's page and its buttons; a delivery of its log.
  { ...page, method: 'GET', path: endpointPage, kind: 'endpointId', id: { in: 'path' }, statuses: [404] },
  { ...page, method: 'POST', path: endpointPage, kind: 'endpointId', id: { in: 'path' }, statuses: [404], fields: { ...csrf, url: 'https://hooks.example.com/other', events: 'steps.updated' } },
  ...['pause', 'resume', 'test', 'rotate-secret', 'redeliver', 'delete'].map((action): IdRoute => ({
    ...page, method: 'POST', path: `${endpointPage}/${action}`, kind: 'endpointId', id: { in: 'path' }, statuses: [404], fields: { ...csrf, delivery_id: real('deliveryId') },
  })),
  { ...page, method: 'POST', path: `${appPage}/webhooks/${real('endpointId')}/redeliver`, kind: 'deliveryId', id: { in: 'form', name: 'delivery_id' }, statuses: [303], fields: csrf },
  // A test person's sandbox actions; the app a revocation names; the consent chooser.
  ...['sync', 'late-sync', 'revoke', 'time-zone'].map((action): IdRoute => ({
    ...page, method: 'POST', path: `/dashboard/test-people/:id/${action}`, kind: 'testPersonId', id: { in: 'path' }, statuses: [404], fields: { ...csrf, app_id: real('appId'), timezone: 'UTC' },
  })),
  { ...page, method: 'POST', path: `/dashboard/test-people/${real('testPersonId')}/revoke`, kind: 'appId', id: { in: 'form', name: 'app_id' }, statuses: [400], fields: csrf },
  {
    ...page, method: 'POST', path: '/oauth2/authorize', kind: 'testPersonId', id: { in: 'form', name: 'consent_as' }, statuses: [403],
    fields: { ...authorization, ...csrf, decision: 'allow', granted_scope: 'read_profile' },
  },
  { ...page, method: 'GET', path: '/oauth2/authorize', kind: 'clientId', id: { in: 'query', name: 'client_id' }, statuses: [400], fields: { ...authorization, client_id: '' } },
  { ...page, method: 'POST', path: '/oauth2/authorize', kind: 'clientId', id: { in: 'form', name: 'client_id' }, statuses: [400], fields: { ...authorization, ...csrf, decision: 'allow', granted_scope: 'read_profile' } },
  // The account page: a revoked app's notice, a grant's revocation, another session's end.
  { ...page, method: 'GET', path: '/account', kind: 'appId', id: { in: 'query', name: 'revoked' }, statuses: [200], fields: { proof: 'x' } },
  { ...page, method: 'POST', path: '/account/connected-apps/:id/revoke', kind: 'appId', id: { in: 'path' }, statuses: [303], fields: csrf },
  { ...page, method: 'POST', path: '/account/sessions/end', kind: null, id: { in: 'form', name: 'session' }, statuses: [303], fields: csrf },
  // The apps' own API: their webhook endpoints and event feed.
  { ...webhookApi, method: 'PATCH', path: '/v1/webhooks/:id', json: { state: 'paused' } },
  { ...webhookApi, method: 'POST', path: '/v1/webhooks/:id/rotate-secret' },
  { ...webhookApi, method: 'DELETE', path: '/v1/webhooks/:id' },
  { method: 'GET', path: '/v1/events', face: 'api', credentials: 'client', kind: null, id: { in: 'query', name: 'after' }, statuses: [400] },
  // The resource API's records.
  { method: 'DELETE', path: '/v1/users/me/sleep/:id', face: 'api', credentials: 'bearer', kind: null, id: { in: 'path' }, statuses: [404] },
  { method: 'DELETE', path: '/v1/users/me/body/weight/:id', face: 'api', credentials: 'bearer', kind: null, id: { in: 'path' }, statuses: [404] },
  // RFC 7592's client configuration endpoint, with a real registration access token.
  ...(['GET', 'PUT', 'DELETE'] as const).map((method): IdRoute => ({
    method, path: '/oauth2/register/:id', face: 'api', credentials: 'registration', kind: 'clientId', id: { in: 'path' }, statuses: [401],
    ...(method === 'PUT' && { json: { client_id: real('clientId'), redirect_uris: [REDIRECT_URI], client_name: 'Renamed' } }),
  })),
  // The client endpoints: the client id in the form.
  clientEndpoint('/oauth2/token', { grant_type: 'client_credentials', scope: 'read_profile' }),
  clientEndpoint('/oauth2/par', authorization),
  clientEndpoint('/oauth2/revoke', { token: real('accessToken') }),
  clientEndpoint('/oauth2/introspect', { token: real('accessToken') }),
  clientEndpoint('/oauth2/device_authorization', { scope: 'read_profile' }),
];

/** U+0000–U+001F and U+007F. */
const control = fc.integer({ min: 0, max: 0x20 }).map((code) => String.fromCharCode(code === 0x20 ? 0x7f : code));
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const odd = fc.oneof({ weight: 3, arbitrary: control }, { weight: 1, arbitrary: loneSurrogate });
const ordinary = fc.constantFrom(...'abcdefXYZ0123456789-_');

/** Percent-escapes a URL decoder refuses: a lone surrogate, an overlong NUL, a cut sequence, not hex. */
const MALFORMED_ESCAPES = ['%ED%A0%80', '%ED%BF%BF', '%C0%80', '%E0%80%80', '%F4%90%80%80', '%E2%82', '%0', '%ZZ'];

/** An id as it is sent: its text, escaped where it goes, or a malformed escape sent as it is. */
interface HostileId {
  text: string;
  raw: boolean;
}

function hostileId(kind: RealName | null): fc.Arbitrary<HostileId> {
  const text = (arbitrary: fc.Arbitrary<string>) => ({ weight: 1, arbitrary: arbitrary.map((value) => ({ text: value, raw: false })) });
  const choices = [
    // Odd characters among ordinary ones.
    { ...text(fc.tuple(fc.string({ unit: fc.oneof(ordinary, odd), maxLength: 24 }), odd, fc.string({ unit: ordinary, maxLength: 24 })).map(([head, one, tail]) => head + one + tail)), weight: 6 },
    // Far too long: past the router's parameter limit, an index entry, a page.
    text(fc.tuple(fc.constantFrom(101, 256, 2_800, 10_000, 70_000), fc.option(odd, { nil: '' })).map(([length, one]) => 'a'.repeat(length) + one)),
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_ESCAPES).map((escaped) => ({ text: escaped, raw: true })) },
  ];
  // A real id of the kind, but for an odd character before or after it.
  if (kind !== null) choices.push({ ...text(fc.tuple(fc.boolean(), odd).map(([first, one]) => (first ? one + real(kind) : real(kind) + one))), weight: 4 });
  return fc.oneof(...choices);
}

/** The request to `route` with `id` in its place, everything else right. */
function requestWith(route: IdRoute, id: HostileId, encoding: Encoding): RequestSpec {
  const spec: Route = { method: route.method, path: route.path, face: route.face, statuses: route.statuses, credentials: route.credentials === 'registration' ? 'bearer' : route.credentials };
  const fields: Fields = Object.entries(route.fields ?? {}).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one): [string, string] => [name, one]));
  const inPath = route.id.in === 'path';
  const idField = route.id.in === 'path' ? null : route.id.name;
  const withId: Fields = idField === null ? fields : [...fields.filter(([name]) => name !== idField), [idField, id.text]];
  // A malformed escape goes as it is. Otherwise a form may carry control characters unescaped, but
  // not an address: a URL parser drops them there (a trailing NUL, a tab anywhere), as HTTP does.
  const fieldEncoding: Encoding = id.raw ? 'raw' : encoding;
  const queryEncoding: Encoding = id.raw ? 'raw' : encoding === 'raw' ? 'percent' : encoding;
  const isGet = route.method === 'GET';
  const credentials = {
    session: { cookie: `stride_session=${real('session')}`, authorization: null },
    client: { cookie: null, authorization: { basic: [real('clientId'), real('clientSecret')] as [string, string], formEncoded: false } },
    bearer: { cookie: null, authorization: { raw: `Bearer ${real('accessToken')}` } },
    registration: { cookie: null, authorization: { raw: `Bearer ${registrationToken}` } },
    none: { cookie: null, authorization: null },
  }[route.credentials];
  const form = route.id.in === 'query' ? fields : withId;
  const body: RequestSpec['body'] =
    route.json !== undefined ? { contentType: 'application/json', json: route.json }
    : !isGet && form.length > 0 ? { contentType: 'application/x-www-form-urlencoded', form, encoding: fieldEncoding }
    : null;
  const queryFields = route.id.in === 'query' ? withId : isGet ? fields : [];
  return described({
    route: spec,
    servedBy: [spec],
    method: route.method,
    path: inPath ? route.path.replace(':id', id.raw ? id.text : escape(id.text)) : route.path,
    pathMangled: false,
    query: queryFields.length > 0 ? { fields: queryFields, encoding: queryEncoding } : null,
    authorization: credentials.authorization,
    cookie: credentials.cookie,
    headers: [],
    body,
    remoteAddress: '127.0.0.1',
  });
}

function described(spec: RequestSpec): RequestSpec {
  Object.defineProperty(spec, fc.toStringMethod, { value: () => `${spec.method} ${spec.path.slice(0, 120)} ${JSON.stringify(spec.query ?? spec.body).slice(0, 300)}`, enumerable: false });
  return spec;
}

/** Every route with an id, each time: a NUL alone, and after a real id of the kind. */
const examples = () =>
  ID_ROUTES.flatMap((route) => [
    requestWith(route, { text: '\u0000', raw: false }, 'percent'),
    requestWith(route, { text: `${real(route.kind ?? 'appId')}\u0000`, raw: false }, 'percent'),
  ]);

const requests = fc
  .tuple(fc.constantFrom(...ID_ROUTES), fc.constantFrom<Encoding>('percent', 'plus', 'raw'))
  .chain(([route, encoding]) => hostileId(route.kind).map((id) => requestWith(route, id, encoding)));

/** Random cases per database in `npm test`, after the examples. */
const RUNS = 150;

/** The registered client's (RFC 7592), made before the cases run. */
let registrationToken = '';

forEachDialect('fuzzing the ids routes read', (dialect) => {
  let target: FuzzTarget;
  before(async () => {
    target = await createFuzzTarget(dialect, { RATE_LIMIT: 'off', REGISTRATION: 'open', REGISTRATION_OWNER });
    const { t } = target;
    await createAccount(t.database.stores.users, t.clock, { email: REGISTRATION_OWNER, password: 'registrar password', displayName: 'Registrar' });
    const registered = await t.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: [REDIRECT_URI], client_name: 'Registered' } });
    assert.equal(registered.statusCode, 201, registered.body);
    registrationToken = registered.json().registration_access_token;
  });
  after(() => target.t.close());

  it('answers an id that cannot be one as an id that names nothing, on every route', async (context) => {
    await fuzz(context, target, requests, RUNS, examples());
  });
});
