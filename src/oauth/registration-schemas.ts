/** The schemas of dynamic client registration (RFC 7591 §2, §3; RFC 7592 §2). */
import { BEARER, errorAnswers } from '../http/schemas.js';

const tags = ['OAuth 2.0'];
const strings = { type: 'array', items: { type: 'string' } } as const;

/**
 * RFC 7591 §2: types only. Which value is wrong is answered with the RFC's own errors
 * (`invalid_redirect_uri`, `invalid_client_metadata`, §3.2.2); metadata Stride does not use is
 * ignored, as §2 requires.
 */
const METADATA_IN = {
  type: 'object',
  properties: {
    redirect_uris: { ...strings, description: 'required: https, http on a loopback host, or a reverse-domain scheme' },
    client_name: { type: 'string', description: 'required: shown on the consent page' },
    token_endpoint_auth_method: { type: 'string', description: 'client_secret_basic (default), client_secret_post, or none (a public client)' },
    grant_types: { ...strings, description: 'authorization_code and refresh_token (both by default); the client may use only these' },
    response_types: { ...strings, description: 'code' },
    scope: { type: 'string', description: 'space-separated; default read_profile' },
    client_uri: { type: 'string' },
    client_id: { type: 'string', description: 'update only: the client’s own' },
    client_secret: { type: 'string', description: 'update only, optional: the current secret' },
  },
} as const;

const CLIENT_INFORMATION = {
  type: 'object',
  required: ['client_id', 'client_id_issued_at', 'client_name', 'redirect_uris', 'token_endpoint_auth_method', 'grant_types', 'response_types', 'scope', 'registration_client_uri'],
  additionalProperties: false,
  properties: {
    client_id: { type: 'string' },
    client_id_issued_at: { type: 'integer' },
    client_name: { type: 'string' },
    redirect_uris: strings,
    token_endpoint_auth_method: { type: 'string', enum: ['client_secret_basic', 'client_secret_post', 'none'] },
    grant_types: strings,
    response_types: strings,
    scope: { type: 'string' },
    client_uri: { type: 'string' },
    registration_client_uri: { type: 'string' },
  },
} as const;

const PARAMS = { type: 'object', required: ['client_id'], properties: { client_id: { type: 'string' } } } as const;

/** RFC 7591 §3. */
export const REGISTER = {
  tags,
  summary: 'Register a client (only when REGISTRATION is token or open)',
  description: 'REGISTRATION=token: Authorization: Bearer <initial access token> from `stride registration-token create`.',
  security: [...BEARER, {}],
  body: METADATA_IN,
  response: {
    201: {
      description: 'The client is registered: its client_id, its metadata, and (shown only here) its secret and registration access token. Cache-Control: no-store; 201 as RFC 7591 §3.2.1 says.',
      ...CLIENT_INFORMATION,
      required: [...CLIENT_INFORMATION.required, 'registration_access_token'],
      properties: {
        ...CLIENT_INFORMATION.properties,
        client_secret: { type: 'string', description: 'confidential clients only' },
        client_secret_expires_at: { type: 'integer', description: '0: never' },
        registration_access_token: { type: 'string', description: 'for the registration_client_uri (RFC 7592)' },
      },
    },
    ...errorAnswers(400, 401, 404, 413, 415),
  },
};

/** RFC 7592 §2.1. */
export const REGISTERED_CLIENT_READ = {
  tags,
  summary: 'Read a registered client (with its registration access token)',
  security: BEARER,
  params: PARAMS,
  response: { 200: { description: 'The client\'s current metadata (RFC 7592 §2.1), with Cache-Control: no-store', ...CLIENT_INFORMATION }, ...errorAnswers(401, 404) },
};

/** RFC 7592 §2.2. */
export const REGISTERED_CLIENT_UPDATE = {
  tags,
  summary: 'Replace a registered client’s metadata (with its registration access token)',
  security: BEARER,
  params: PARAMS,
  body: METADATA_IN,
  response: { 200: { description: 'The client\'s metadata as replaced (RFC 7592 §2.2), with Cache-Control: no-store', ...CLIENT_INFORMATION }, ...errorAnswers(400, 401, 404, 413, 415) },
};

/** RFC 7592 §2.3. */
export const REGISTERED_CLIENT_DELETE = {
  tags,
  summary: 'Delete a registered client with its grants and tokens (with its registration access token)',
  security: BEARER,
  params: PARAMS,
  response: { 204: { description: 'deleted (RFC 7592 §2.3)', type: 'null' }, ...errorAnswers(401, 404) },
};
