/** The schemas of the authorization server's endpoints for clients (docs/oauth.md, RFCs as named). */
import { ALL_SCOPES } from '../domain/scopes.js';
import { CLIENT, errorAnswers } from '../http/schemas.js';
import { CLIENT_AUTH_METHODS } from './metadata.js';
import { SUPPORTED_GRANT_TYPES } from './token.js';

const tags = ['OAuth 2.0'];
const FORM = 'application/x-www-form-urlencoded';

const CLIENT_FIELDS = {
  client_id: { type: 'string', description: 'with client_secret, instead of HTTP Basic; alone for a public client' },
  client_secret: { type: 'string' },
} as const;

/** RFC 6749 §4.1.3 and §6; §5.1 for the answer. */
export const TOKEN = {
  tags,
  summary: 'Exchange an authorization code or a device code, or rotate a refresh token',
  description:
    'The grants (`grant_type`): `authorization_code` (RFC 6749 §4.1.3: `code`, `redirect_uri`, and `code_verifier` with PKCE — required of public clients), ' +
    '`refresh_token` (§6: `refresh_token`; the answer carries a new one and the old one stops working) and ' +
    '`urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4: `device_code`, polled at the interval given). ' +
    'There is no `client_credentials` grant: every token acts for a person, so it is answered `unsupported_grant_type`. ' +
    'Clients authenticate with HTTP Basic or the `client_id` and `client_secret` fields; a public client sends `client_id` alone.\n\n' +
    'With a `DPoP` header (a proof, RFC 9449 §4) the access token, and a public client\'s refresh token, are bound to the proof\'s key and `token_type` is `DPoP`. ' +
    'A refresh token so bound is refused without a proof of that key; an app that requires DPoP gets no token without a proof (`invalid_dpop_proof`). ' +
    'With DPOP_NONCE=true a proof without the current nonce is answered `use_dpop_nonce` with a `DPoP-Nonce` header.',
  security: CLIENT,
  consumes: [FORM],
  // Types only: which parameters a grant needs, and the OAuth error for each one missing or wrong
  // (RFC 6749 §5.2), are the grant's to say.
  body: {
    type: 'object',
    properties: {
      grant_type: { type: 'string', description: `required: ${SUPPORTED_GRANT_TYPES.join(' or ')}` },
      code: { type: 'string', description: 'authorization_code' },
      redirect_uri: { type: 'string', description: 'authorization_code: exactly the one of the authorization request; refresh_token: checked if sent' },
      code_verifier: { type: 'string', description: 'authorization_code with PKCE (RFC 7636 §4.5); required of public clients' },
      refresh_token: { type: 'string', description: 'refresh_token: the token to rotate; a retry within REFRESH_REPLAY_WINDOW gets the same answer' },
      device_code: {
        type: 'string',
        description: 'urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4): until the person answers, authorization_pending; slow_down when polled faster than the interval (which then grows by 5 s); expired_token; access_denied',
      },
      ...CLIENT_FIELDS,
    },
    examples: [
      { grant_type: 'authorization_code', code: 'sac_…', redirect_uri: 'https://app.example/callback', code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', client_id: '627dde1d4cafeac8e9a67191be804232', client_secret: 'scs_…' },
      { grant_type: 'refresh_token', refresh_token: 'srt_…', client_id: '627dde1d4cafeac8e9a67191be804232', client_secret: 'scs_…' },
      { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'sdc_…', client_id: '627dde1d4cafeac8e9a67191be804232' },
    ],
  },
  response: {
    200: {
      description: 'The tokens (RFC 6749 §5.1), with Cache-Control: no-store',
      type: 'object',
      required: ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'user_id'],
      additionalProperties: false,
      properties: {
        access_token: { type: 'string' },
        token_type: { type: 'string', enum: ['Bearer', 'DPoP'] },
        expires_in: { type: 'integer' },
        refresh_token: { type: 'string', description: 'a new one every time; the old one stops working' },
        scope: { type: 'string', description: "the scopes granted; in Fitbit's scope words when the app asked in them (docs/oauth.md, \"Fitbit clients\")" },
        user_id: { type: 'string', description: 'the person the tokens act for: the `id` of their profile (`encodedId` on the Fitbit-compatible paths)' },
      },
    },
    ...errorAnswers(400, 401, 413, 415),
  },
};

/** RFC 8628 §3.1; §3.2 for the answer. */
export const DEVICE_AUTHORIZATION = {
  tags,
  summary: 'Start a device authorization: a device code to poll with, a user code for a person to type at /device',
  security: CLIENT,
  consumes: [FORM],
  body: {
    type: 'object',
    properties: {
      scope: { type: 'string', description: "space-separated Stride scopes or Fitbit scope words (docs/oauth.md, \"Fitbit clients\"); without it, the app's registered scopes" },
      ...CLIENT_FIELDS,
    },
  },
  response: {
    200: {
      description: 'The device code for polling and the user code for the person (RFC 8628 §3.2), with Cache-Control: no-store',
      type: 'object',
      required: ['device_code', 'user_code', 'verification_uri', 'verification_uri_complete', 'expires_in', 'interval'],
      additionalProperties: false,
      properties: {
        device_code: { type: 'string', description: 'for the token request; never shown to the person' },
        user_code: { type: 'string', description: 'XXXX-XXXX, letters of BCDFGHJKLMNPQRSTVWXZ; typed case- and hyphen-insensitively' },
        verification_uri: { type: 'string', description: 'the page where the person types the user code' },
        verification_uri_complete: { type: 'string', description: 'the same page with the user code filled in (for a QR code)' },
        expires_in: { type: 'integer' },
        interval: { type: 'integer', description: 'seconds to wait between polls' },
      },
    },
    ...errorAnswers(400, 401, 413, 415),
  },
};

const TOKEN_HINT = {
  token: { type: 'string', description: 'required' },
  token_type_hint: { type: 'string', description: 'access_token or refresh_token; a hint only (RFC 7009 §2.1)' },
  ...CLIENT_FIELDS,
} as const;

/** RFC 7009 §2. */
export const REVOKE = {
  tags,
  summary: 'Revoke an access or refresh token of the calling client',
  security: CLIENT,
  consumes: [FORM],
  body: { type: 'object', properties: TOKEN_HINT },
  response: { 200: { description: 'revoked, or not a live token of this client (RFC 7009 §2.2)', type: 'null' }, ...errorAnswers(400, 401, 413, 415) },
};

/** RFC 7662 §2. */
export const INTROSPECT = {
  tags,
  summary: 'Whether a token of the calling client is active, and what it grants',
  security: CLIENT,
  consumes: [FORM],
  body: { type: 'object', properties: TOKEN_HINT },
  response: {
    200: {
      description: 'Whether the token is active, and for an active one its scope, client and person (RFC 7662 §2.2); `{"active": false}` for any other token',
      type: 'object',
      required: ['active'],
      additionalProperties: false,
      properties: {
        active: { type: 'boolean' },
        scope: { type: 'string' },
        client_id: { type: 'string' },
        sub: { type: 'string' },
        exp: { type: 'integer' },
        iat: { type: 'integer' },
        token_type: { type: 'string', enum: ['Bearer', 'DPoP', 'refresh_token'] },
        cnf: {
          type: 'object',
          description: 'a DPoP-bound token: the RFC 7638 thumbprint of its key (RFC 9449 §6.2)',
          additionalProperties: false,
          properties: { jkt: { type: 'string' } },
        },
      },
    },
    ...errorAnswers(400, 401, 413, 415),
  },
};

const METHODS = { type: 'array', items: { type: 'string', enum: CLIENT_AUTH_METHODS } } as const;

/** RFC 8414 §3.2. */
export const METADATA = {
  tags,
  summary: 'Authorization server metadata',
  response: {
    200: {
      description: 'The endpoints, scopes, grants and methods this server supports (RFC 8414 §3.2)',
      type: 'object',
      additionalProperties: false,
      properties: {
        issuer: { type: 'string' },
        authorization_endpoint: { type: 'string' },
        token_endpoint: { type: 'string' },
        revocation_endpoint: { type: 'string' },
        introspection_endpoint: { type: 'string' },
        device_authorization_endpoint: { type: 'string' },
        scopes_supported: { type: 'array', items: { type: 'string', enum: ALL_SCOPES } },
        response_types_supported: { type: 'array', items: { type: 'string' } },
        response_modes_supported: { type: 'array', items: { type: 'string' } },
        grant_types_supported: { type: 'array', items: { type: 'string' } },
        token_endpoint_auth_methods_supported: METHODS,
        revocation_endpoint_auth_methods_supported: METHODS,
        introspection_endpoint_auth_methods_supported: METHODS,
        code_challenge_methods_supported: { type: 'array', items: { type: 'string' } },
        authorization_response_iss_parameter_supported: { type: 'boolean' },
        dpop_signing_alg_values_supported: { type: 'array', items: { type: 'string' } },
        pushed_authorization_request_endpoint: { type: 'string' },
        require_pushed_authorization_requests: { type: 'boolean', description: 'false: only apps set to require PAR must use it' },
        registration_endpoint: { type: 'string', description: 'only when REGISTRATION is token or open' },
        service_documentation: { type: 'string' },
      },
    },
    ...errorAnswers(),
  },
};

/** RFC 9126 §2.1: the authorization request's parameters, with the client's authentication. */
export const PAR = {
  tags,
  summary: 'Push an authorization request; use the request_uri answered at the authorization endpoint',
  security: CLIENT,
  consumes: [FORM],
  body: {
    type: 'object',
    properties: {
      response_type: { type: 'string', description: 'required: code' },
      redirect_uri: { type: 'string', description: 'one of the app’s registered redirect URIs' },
      scope: { type: 'string', description: 'space-separated Stride scopes or Fitbit scope words, as at the authorization endpoint' },
      state: { type: 'string' },
      code_challenge: { type: 'string', description: 'S256 PKCE challenge; required of public clients' },
      code_challenge_method: { type: 'string', enum: ['S256'] },
      prompt: { type: 'string' },
      ...CLIENT_FIELDS,
    },
    // Every parameter once, as a string (RFC 6749 §3.1); those Stride does not know are kept and ignored.
    additionalProperties: { type: 'string' },
  },
  response: {
    201: {
      description: 'The request_uri to send to the authorization endpoint with client_id; Cache-Control: no-store. 201 as RFC 9126 §2.2 says.',
      type: 'object',
      required: ['request_uri', 'expires_in'],
      additionalProperties: false,
      properties: {
        request_uri: { type: 'string', description: 'urn:ietf:params:oauth:request_uri:…, usable once, by this client only' },
        expires_in: { type: 'integer', description: 'seconds: 60' },
      },
    },
    ...errorAnswers(400, 401, 413, 415),
  },
};
