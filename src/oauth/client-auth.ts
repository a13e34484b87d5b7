/**
 * Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3):
 * `client_secret_basic`, `client_secret_post`, and `none` for public clients (which must then use
 * PKCE). Failures are 401 `invalid_client`, with a Basic challenge when Basic was tried (§5.2).
 */
import { ApiError, invalidRequest, REALM } from '../errors.js';
import { constantTimeEqual, hashCredential } from '../security/secrets.js';
import type { App, AppStore } from '../store/apps.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface AuthenticatedClient {
  app: App;
  method: ClientAuthMethod;
}

interface Credentials {
  clientId: string;
  clientSecret: string | undefined;
  method: ClientAuthMethod;
}

/** A hash no secret has, compared against when the client is unknown to spend the same time. */
const UNKNOWN_CLIENT_HASH = hashCredential('stride-unknown-client');

function invalidClient(description: string, basicTried: boolean): ApiError {
  return new ApiError('invalid_client', description, basicTried ? { 'www-authenticate': `Basic realm="${REALM}"` } : {});
}

/** RFC 6749 §2.3.1: the id and secret are form-urlencoded before being joined and base64-encoded. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

export function parseBasicCredentials(header: string): { clientId: string; clientSecret: string } | null {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

function readCredentials(body: Record<string, string | undefined>, authorization: string | undefined): Credentials {
  if (authorization !== undefined) {
    const basic = parseBasicCredentials(authorization);
    if (!basic) throw invalidClient('the Authorization header is not valid HTTP Basic client authentication', true);
    if (body.client_secret !== undefined) {
      // RFC 6749 §2.3: a client must not use more than one authentication method per request.
      throw invalidRequest('client credentials were sent both in the Authorization header and in the body');
    }
    if (body.client_id !== undefined && body.client_id !== basic.clientId) {
      throw invalidRequest('client_id in the body differs from the one in the Authorization header');
    }
    return { clientId: basic.clientId, clientSecret: basic.clientSecret, method: 'client_secret_basic' };
  }
  if (body.client_id === undefined || body.client_id === '') {
    throw invalidClient('client authentication is required: client_id (and client_secret) or HTTP Basic', false);
  }
  return body.client_secret === undefined
    ? { clientId: body.client_id, clientSecret: undefined, method: 'none' }
    : { clientId: body.client_id, clientSecret: body.client_secret, method: 'client_secret_post' };
}

/** RFC 6749 §2.3.1: the client of a token, revocation or introspection request, authenticated. */
export async function authenticateClient(
  apps: AppStore,
  body: Record<string, string | undefined>,
  authorization: string | undefined,
): Promise<AuthenticatedClient> {
  const credentials = readCredentials(body, authorization);
  const basicTried = credentials.method === 'client_secret_basic';
  const app = await apps.findByClientId(credentials.clientId);
  if (!app) {
    if (credentials.clientSecret !== undefined) constantTimeEqual(hashCredential(credentials.clientSecret), UNKNOWN_CLIENT_HASH);
    throw invalidClient('client authentication failed', basicTried);
  }
  if (app.isPublic) {
    // Public clients have no secret (token_endpoint_auth_method "none"); an empty Basic password
    // is how some libraries send "no secret".
    if (credentials.clientSecret !== undefined && credentials.clientSecret !== '') {
      throw invalidClient('client authentication failed', basicTried);
    }
    return { app, method: 'none' };
  }
  if (credentials.clientSecret === undefined) {
    throw invalidClient('this client must authenticate with its client_secret', basicTried);
  }
  if (!constantTimeEqual(hashCredential(credentials.clientSecret), app.clientSecretHash ?? UNKNOWN_CLIENT_HASH)) {
    throw invalidClient('client authentication failed', basicTried);
  }
  return { app, method: credentials.method };
}
