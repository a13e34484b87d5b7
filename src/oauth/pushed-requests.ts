/**
 * Pushed authorization requests (RFC 9126; docs/decisions/0020-pushed-authorization-requests.md):
 * a client posts its authorization request to /oauth2/par, authenticated as at the token endpoint,
 * and gets a one-time request_uri that the authorization endpoint takes in its place.
 */
import type { AppContext } from '../context.js';
import { ApiError, invalidRequest } from '../errors.js';
import { hashCredential, newCredential } from '../security/secrets.js';
import type { App } from '../store/apps.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { FormParameters } from './grant.js';

/** RFC 9126 §2.2: a short life; the request_uri is meant to be used at once. */
export const PUSHED_REQUEST_TTL = 60;
/**
 * How long after its request_uri expires a consent page shown for it may still be answered: the
 * request_uri must be presented within PUSHED_REQUEST_TTL, the person's decision may take longer.
 */
export const PUSHED_REQUEST_DECISION_WINDOW = 600;

const URN_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/**
 * The parameters kept: those the authorization endpoint reads (authorize.ts). Client credentials
 * and anything else a client sends are not stored; request_uri itself is refused (§2.1).
 */
const STORED = new Set(['response_type', 'client_id', 'redirect_uri', 'redirect_url', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt']);

/**
 * The most a pushed request may hold, counting every name and value but the client's secret. A
 * request pushed is kept for an hour (the sweeper's margin) whether or not it is used; a direct
 * authorization request is bounded by the URL a browser can send, so this is no stricter.
 */
export const MAX_PUSHED_REQUEST_LENGTH = 8192;

export interface PushedRequestResponse {
  request_uri: string;
  expires_in: number;
}

/**
 * Stores an authorization request its (authenticated) client pushed, once it passed the same
 * checks the authorization endpoint makes (`validate`, RFC 9126 §2.1).
 */
export async function pushAuthorizationRequest(
  ctx: AppContext,
  client: AuthenticatedClient,
  body: FormParameters,
  validate: (params: Record<string, string>) => Promise<{ error: string; description: string } | null>,
): Promise<PushedRequestResponse> {
  if (body.request_uri !== undefined) throw invalidRequest('request_uri must not be sent to the pushed authorization request endpoint (RFC 9126 §2.1)');
  let length = 0;
  for (const [name, value] of Object.entries(body)) if (value !== undefined && name !== 'client_secret') length += name.length + value.length;
  if (length > MAX_PUSHED_REQUEST_LENGTH) throw invalidRequest(`the pushed request's parameters are longer than ${MAX_PUSHED_REQUEST_LENGTH} characters`);
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) if (value !== undefined && STORED.has(name)) params[name] = value;
  params.client_id = client.app.clientId;
  const problem = await validate(params);
  if (problem) throw new ApiError(problem.error as 'invalid_request', problem.description);
  const random = newCredential('pushedRequest');
  const now = ctx.clock();
  await ctx.stores.pushedRequests.insert(hashCredential(random), client.app.id, params, now + PUSHED_REQUEST_TTL, now);
  return { request_uri: URN_PREFIX + random, expires_in: PUSHED_REQUEST_TTL };
}

export type PushedLookup = { ok: true; params: Record<string, string>; requestUriHash: string } | { ok: false; problem: string };

/**
 * The parameters behind `requestUri` for `app` (RFC 9126 §4): unknown, used, expired or pushed by
 * another client, it is refused. `grace`: seconds past expiry still accepted (a consent decision).
 */
export async function pushedParameters(ctx: AppContext, app: App, requestUri: string, grace = 0): Promise<PushedLookup> {
  const refused: PushedLookup = { ok: false, problem: 'The request_uri is unknown, expired or already used (invalid_request_uri).' };
  if (!requestUri.startsWith(URN_PREFIX)) return refused;
  const requestUriHash = hashCredential(requestUri.slice(URN_PREFIX.length));
  const pushed = await ctx.stores.pushedRequests.find(requestUriHash);
  if (!pushed || pushed.appId !== app.id || pushed.usedAt !== null || pushed.expiresAt + grace <= ctx.clock()) return refused;
  return { ok: true, params: pushed.parameters, requestUriHash };
}

/** Uses the pushed request once (RFC 9126 §4): false when it was used already or is too old. */
export function claimPushedRequest(ctx: AppContext, requestUriHash: string): Promise<boolean> {
  const now = ctx.clock();
  return ctx.stores.pushedRequests.claim(requestUriHash, now, now - PUSHED_REQUEST_DECISION_WINDOW);
}
