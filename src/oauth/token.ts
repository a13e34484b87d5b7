/**
 * The token endpoint (RFC 6749 §3.2, docs/oauth.md): client authentication, then the grant named by
 * `grant_type`. Adding a grant is one file under grants/ and one line in GRANTS.
 */
import type { AppContext } from '../context.js';
import { ApiError, invalidRequest } from '../errors.js';
import { authenticateClient } from './client-auth.js';
import { authenticated, type ClientProven } from './client-proof.js';
import * as authorizationCode from './grants/authorization-code.js';
import * as refreshToken from './grants/refresh-token.js';
import type { TokenResponse } from './issue-tokens.js';

type Body = Record<string, string | undefined>;
/**
 * Authenticates the client (client-auth.ts), then carries out the grant; tells `proven` when the
 * request has proven its client (client-proof.ts).
 */
type GrantExchange = (ctx: AppContext, body: Body, authorization: string | undefined, proven: ClientProven) => Promise<TokenResponse>;

const GRANTS: Record<string, GrantExchange> = {
  [authorizationCode.grantType]: async (ctx, body, authorization, proven) =>
    authorizationCode.handler(ctx, authenticated(await authenticateClient(ctx.stores.apps, body, authorization), proven), body, proven),
  [refreshToken.grantType]: refreshToken.exchange,
};

export const SUPPORTED_GRANT_TYPES = Object.keys(GRANTS);

/**
 * The form body as single strings. RFC 6749 §3.2: parameters must not be repeated; a body that is
 * not a form is refused.
 */
export function formParameters(request: { headers: Record<string, unknown>; body: unknown }): Record<string, string | undefined> {
  const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new ApiError('unsupported_media_type', 'the body must be application/x-www-form-urlencoded (RFC 6749 §3.2)');
  }
  const body = request.body;
  if (body === null || typeof body !== 'object') throw invalidRequest('the body must be application/x-www-form-urlencoded');
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (Array.isArray(value)) throw invalidRequest(`${name} must not be repeated`);
    if (typeof value !== 'string') throw invalidRequest(`${name} must be a string`);
    result[name] = value;
  }
  return result;
}

export async function exchange(
  ctx: AppContext,
  body: Record<string, string | undefined>,
  authorization: string | undefined,
  proven: ClientProven,
): Promise<TokenResponse> {
  const grantType = body.grant_type;
  if (!grantType) throw invalidRequest('grant_type is required');
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (grant) return grant(ctx, body, authorization, proven);
  // An unknown client is told so first (invalid_client), as for every grant.
  authenticated(await authenticateClient(ctx.stores.apps, body, authorization), proven);
  throw new ApiError('unsupported_grant_type', `grant_type must be one of ${SUPPORTED_GRANT_TYPES.join(', ')}`);
}
