/**
 * Fuzzing the authorization server (src/oauth/routes.ts, src/web/pages/authorize.ts): RFC 8414 metadata, the authorization
 * endpoint (GET: login or consent page or redirect; POST: the consent decision), the client
 * endpoints — token, revocation, introspection, pushed authorization requests — and dynamic
 * client registration. Every answer holds the invariants of
 * invariants.ts, on every database.
 */
import { after, before, it } from 'node:test';
import fc from 'fast-check';
import { createAccount } from '../../src/domain/users.js';
import { forEachDialect } from '../support/databases.js';
import { realValue } from './hostile.js';
import { PUBLIC_REDIRECT_URI, REDIRECT_URI } from './world.js';
import { base64url43, clientId, mostly, redirectUri, scopeList } from './plausible.js';
import { createFuzzTarget, fuzz, type FuzzTarget } from './property.js';
import { requestsTo, type Route } from './requests.js';
import { cheapPasswordHashing } from '../support/passwords.js';

/** The fuzz world's account, and those the cases sign up, sign in at the cheap cost: no property here is about hashing. */
cheapPasswordHashing();

const authorizationRequest = {
  response_type: mostly(['code'], ['token', 'code id_token', 'CODE', 'code ']),
  client_id: clientId,
  redirect_uri: redirectUri,
  // The older name for redirect_uri: sent alone, or with it (then both must agree).
  redirect_url: null,
  state: fc.string(),
  scope: scopeList,
  code_challenge: fc.oneof({ weight: 3, arbitrary: realValue(['codeChallenge']) }, { weight: 1, arbitrary: base64url43 }),
  code_challenge_method: mostly(['S256'], ['plain', 's256', 'S512']),
  prompt: fc.constantFrom('consent', 'none', 'login', 'consent login', 'select_account'),
};

const clientCredentials = {
  client_id: clientId,
  client_secret: realValue(['clientSecret']),
};

/** Each app's own redirect URI (or a near miss of it), so that requests get to the checks behind it. */
const forConfidentialApp = { client_id: realValue(['clientId']), redirect_uri: mostly([REDIRECT_URI], [`${REDIRECT_URI}/`, PUBLIC_REDIRECT_URI]) };
// A public app's loopback redirect URI matches with any port (RFC 8252 §7.3), but not with another path or host.
const forPublicApp = {
  client_id: realValue(['publicClientId']),
  redirect_uri: mostly([PUBLIC_REDIRECT_URI, 'http://127.0.0.1:10/cb'], ['http://127.0.0.1:10/cb/', 'http://localhost:9/cb', REDIRECT_URI]),
};

const authorizeGet: Omit<Route, 'fields'> = { method: 'GET', path: '/oauth2/authorize', face: 'page', statuses: [200, 302, 400], credentials: 'session' };
const consentPost: Route = {
  method: 'POST',
  path: '/oauth2/authorize',
  face: 'page',
  statuses: [303, 400, 403],
  fields: {
    ...authorizationRequest,
    csrf_token: realValue(['csrf']),
    decision: mostly(['allow', 'deny'], ['ALLOW', 'allow ']),
    granted_scope: scopeList,
  },
  credentials: 'session',
};
const clientEndpoint: Omit<Route, 'path'> = { method: 'POST', face: 'api', statuses: [200, 400, 401], credentials: 'client', rateLimited: true };
const tokenRequest = {
  grant_type: mostly(['authorization_code', 'refresh_token'], ['client_credentials', 'password', 'urn:ietf:params:oauth:grant-type:device_code', 'constructor', '__proto__']),
  code: realValue(['code', 'code', 'code', 'refreshToken', 'accessToken']),
  redirect_uri: redirectUri,
  code_verifier: fc.oneof({ weight: 3, arbitrary: realValue(['codeVerifier']) }, { weight: 1, arbitrary: base64url43 }),
  refresh_token: realValue(['refreshToken', 'refreshToken', 'refreshToken', 'accessToken', 'code']),
  scope: scopeList,
  ...clientCredentials,
};

/**
 * Some routes appear more than once: with every field, and with the fields of one scenario (the
 * confidential or the public app, a code exchange, a refresh) so that more cases get deep.
 */
export const OAUTH_ROUTES: Route[] = [
  { method: 'GET', path: '/.well-known/oauth-authorization-server', face: 'api', statuses: [200], credentials: 'none' },
  { ...authorizeGet, fields: authorizationRequest },
  { ...authorizeGet, fields: { ...authorizationRequest, ...forConfidentialApp } },
  { ...authorizeGet, fields: { ...authorizationRequest, ...forPublicApp } },
  consentPost,
  { ...consentPost, fields: { ...consentPost.fields, ...forConfidentialApp } },
  { ...clientEndpoint, path: '/oauth2/token', fields: tokenRequest },
  {
    ...clientEndpoint,
    path: '/oauth2/token',
    fields: { ...tokenRequest, grant_type: fc.constant('authorization_code'), code: realValue(['code']), redirect_uri: mostly([REDIRECT_URI], [PUBLIC_REDIRECT_URI]), refresh_token: null },
  },
  { ...clientEndpoint, path: '/oauth2/token', fields: { ...tokenRequest, grant_type: fc.constant('refresh_token'), refresh_token: realValue(['refreshToken']), code: null, code_verifier: null } },
  // RFC 8628: the device authorization request, and polls with device codes of every shape.
  { ...clientEndpoint, path: '/oauth2/device_authorization', fields: { scope: scopeList, ...clientCredentials } },
  { ...clientEndpoint, path: '/oauth2/device_authorization', fields: { scope: scopeList, client_id: realValue(['publicClientId']), client_secret: null } },
  {
    ...clientEndpoint,
    path: '/oauth2/token',
    fields: {
      grant_type: fc.constant('urn:ietf:params:oauth:grant-type:device_code'),
      device_code: fc.oneof(fc.constantFrom('sdc_', 'sdc_x', ''), fc.string()),
      ...clientCredentials,
    },
  },
  // RFC 9126: the authorization request's fields with client authentication.
  { ...clientEndpoint, path: '/oauth2/par', statuses: [201, 400, 401], fields: { ...authorizationRequest, ...clientCredentials } },
  { ...clientEndpoint, path: '/oauth2/par', statuses: [201, 400, 401], fields: { ...authorizationRequest, ...clientCredentials, ...forConfidentialApp } },
  // RFC 7591/7592 (REGISTRATION=open below): JSON metadata, and the registration access token's routes.
  { method: 'POST', path: '/oauth2/register', face: 'api', statuses: [201, 400, 401], json: registrationMetadata(), credentials: 'none', rateLimited: true },
  ...(['GET', 'PUT', 'DELETE'] as const).map((method): Route => ({
    method,
    path: '/oauth2/register/:client_id',
    params: { client_id: realValue(['clientId', 'publicClientId']) },
    face: 'api',
    statuses: [200, 204, 400, 401],
    ...(method === 'PUT' && { json: registrationMetadata() }),
    credentials: 'bearer',
    rateLimited: true,
  })),
  ...(['/oauth2/revoke', '/oauth2/introspect'] as const).map((path): Route => ({
    ...clientEndpoint,
    path,
    fields: {
      token: realValue(['accessToken', 'refreshToken', 'narrowToken', 'code', 'clientSecret']),
      token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'code', 'id_token', ''),
      ...clientCredentials,
    },
  })),
];

/** RFC 7591 metadata: plausible values of each field, some of them wrong. */
function registrationMetadata(): fc.Arbitrary<unknown> {
  return fc.record(
    {
      redirect_uris: fc.array(redirectUri, { maxLength: 3 }),
      client_name: fc.oneof(fc.constant('Fuzzed App'), fc.string()),
      token_endpoint_auth_method: mostly(['client_secret_basic', 'client_secret_post', 'none'], ['private_key_jwt', '', 'NONE']),
      grant_types: fc.array(mostly(['authorization_code', 'refresh_token'], ['client_credentials', 'implicit']), { maxLength: 3 }),
      response_types: fc.array(mostly(['code'], ['token', 'id_token']), { maxLength: 2 }),
      scope: scopeList,
      client_uri: fc.oneof(fc.constant('https://fuzz.example'), fc.string()),
      client_id: realValue(['clientId']),
    },
    { requiredKeys: [] },
  );
}

const REGISTRATION_OWNER = 'fuzz-operator@example.com';

/** Cases per database in `npm test`. */
const RUNS = 1000;

forEachDialect('fuzzing the authorization server', (dialect) => {
  let target: FuzzTarget;
  before(async () => {
    target = await createFuzzTarget(dialect, { REGISTRATION: 'open', REGISTRATION_OWNER });
    await createAccount(target.t.database.stores.users, target.t.clock, { email: REGISTRATION_OWNER, password: 'correct horse battery', displayName: 'Operator' });
  });
  after(() => target.t.close());

  it('answers every malformed, hostile or half-valid request within the error contract', async (context) => {
    await fuzz(context, target, requestsTo(OAUTH_ROUTES), RUNS);
  });
});
