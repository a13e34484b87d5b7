/**
 * The token endpoint (RFC 6749 §3.2, docs/oauth.md): the client is authenticated once, then the
 * grant named by `grant_type` runs with it (the contract: grant.ts). Adding a grant is its
 * declaration in grant-types.ts (usage count, registration), one file under grants/ and one entry
 * in GRANTS.
 */
import { ApiError, invalidRequest } from '../errors.js';
import type { AppContext } from '../context.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { FormParameters, Grant } from './grant.js';
import { authorizationCode } from './grants/authorization-code.js';
import { deviceCode } from './grants/device-code.js';
import { refreshToken } from './grants/refresh-token.js';
import type { TokenResponse } from './issue-tokens.js';
import type { VerifiedProof } from './dpop.js';

const GRANTS = new Map<string, Grant>([authorizationCode, refreshToken, deviceCode].map((grant) => [grant.grantType, grant]));

export const SUPPORTED_GRANT_TYPES = [...GRANTS.keys()];

/** Verifies the request's DPoP proof (dpop.ts); undefined when it carried none. Called once, after the client is authenticated. */
export type ProofVerification = () => Promise<VerifiedProof | undefined>;

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

/**
 * A token request of an authenticated client (the client endpoints' preamble, routes.ts, has
 * authenticated it: an unknown client hears `invalid_client` first, whatever the grant):
 * `grant_type` is required; the grant must exist and take the client's kind; then the DPoP proof,
 * if any, is verified (RFC 9449 §5); then its handler runs.
 */
export async function exchange(ctx: AppContext, body: FormParameters, client: AuthenticatedClient, verifyProof: ProofVerification): Promise<TokenResponse> {
  const grantType = body.grant_type;
  if (!grantType) throw invalidRequest('grant_type is required');
  const grant = GRANTS.get(grantType);
  if (!grant) throw new ApiError('unsupported_grant_type', `grant_type must be one of ${SUPPORTED_GRANT_TYPES.join(', ')}`);
  if (!grant.clients.includes(client.kind)) {
    throw new ApiError('unauthorized_client', `a ${client.kind} client may not use grant_type ${grantType}`);
  }
  // Per app, the grant types its developer allowed (docs/oauth.md, "Grant types per app").
  if (!client.app.grantTypes.includes(grantType)) {
    throw new ApiError('unauthorized_client', `this app may not use grant_type ${grantType}; its developer can allow it in the app's settings`);
  }
  const dpop = await verifyProof();
  // An app that requires DPoP is never issued a bearer token (RFC 9449 §5).
  if (dpop === undefined && client.app.requireDpop) throw new ApiError('invalid_dpop_proof', 'this app must send a DPoP proof with every token request');
  return grant.handle(ctx, { client, body, dpop });
}
