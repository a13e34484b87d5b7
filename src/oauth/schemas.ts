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
  summary: 'Exchange an authorization code, or rotate a refresh token',
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
      ...CLIENT_FIELDS,
    },
  },
  response: {
    200: {
      description: 'Cache-Control: no-store',
      type: 'object',
      required: ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope'],
      additionalProperties: false,
      properties: {
        access_token: { type: 'string' },
        token_type: { type: 'string', enum: ['Bearer'] },
        expires_in: { type: 'integer' },
        refresh_token: { type: 'string', description: 'a new one every time; the old one stops working' },
        scope: { type: 'string' },
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
        token_type: { type: 'string', enum: ['Bearer', 'refresh_token'] },
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
      type: 'object',
      additionalProperties: false,
      properties: {
        issuer: { type: 'string' },
        authorization_endpoint: { type: 'string' },
        token_endpoint: { type: 'string' },
        revocation_endpoint: { type: 'string' },
        introspection_endpoint: { type: 'string' },
        scopes_supported: { type: 'array', items: { type: 'string', enum: ALL_SCOPES } },
        response_types_supported: { type: 'array', items: { type: 'string' } },
        response_modes_supported: { type: 'array', items: { type: 'string' } },
        grant_types_supported: { type: 'array', items: { type: 'string' } },
        token_endpoint_auth_methods_supported: METHODS,
        revocation_endpoint_auth_methods_supported: METHODS,
        introspection_endpoint_auth_methods_supported: METHODS,
        code_challenge_methods_supported: { type: 'array', items: { type: 'string' } },
        authorization_response_iss_parameter_supported: { type: 'boolean' },
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
      scope: { type: 'string' },
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
      description: 'Cache-Control: no-store. 201 as RFC 9126 §2.2 says (SPEC §5 otherwise answers 200).',
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
