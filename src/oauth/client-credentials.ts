/**
 * The client credentials of a request, read in one place for every endpoint that takes them (the
 * token, revocation and introspection endpoints, the event feed and webhooks): HTTP Basic (RFC 7617
 * with RFC 6749 §2.3.1's form encoding) or the form fields `client_id` and `client_secret`. What
 * they are worth is client-auth.ts's to decide.
 */
import { ApiError, invalidRequest, REALM } from '../errors.js';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface ClientCredentials {
  clientId: string;
  /** Undefined when none was sent (a public client's `none`); '' when Basic carried an empty one. */
  clientSecret: string | undefined;
  method: ClientAuthMethod;
}

/** RFC 6749 §5.2: 401, with a Basic challenge when the client tried Basic. */
export function invalidClient(description: string, basicTried: boolean): ApiError {
  return new ApiError('invalid_client', description, basicTried ? { 'www-authenticate': `Basic realm="${REALM}"` } : {});
}

/** RFC 6749 §2.3.1: the id and secret are form-urlencoded before being joined and base64-encoded. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** The id and secret of an `Authorization: Basic …` header; null when it is not one. */
function parseBasicCredentials(header: string): { clientId: string; clientSecret: string } | null {
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

/**
 * The credentials a request carries: the Authorization header when there is one, else the form
 * fields. RFC 6749 §2.3 has a client use one method per request; Fitbit's client libraries
 * (python-fitbit, fitbit-node) send the same id and secret both ways, which is one authentication
 * and is taken as Basic — different credentials in the two places are refused.
 */
export function readClientCredentials(body: Readonly<Record<string, string | undefined>>, authorization: string | undefined): ClientCredentials {
  if (authorization !== undefined) {
    const basic = parseBasicCredentials(authorization);
    if (!basic) throw invalidClient('the Authorization header is not valid HTTP Basic client authentication', true);
    if (body.client_secret !== undefined && body.client_secret !== basic.clientSecret) {
      throw invalidRequest('client_secret in the body differs from the one in the Authorization header');
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
