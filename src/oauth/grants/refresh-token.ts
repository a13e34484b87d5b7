/**
 * `grant_type=refresh_token` (RFC 6749 §6) with rotation (RFC 9700 §4.14.2): each use returns a
 * new access token and a new refresh token, and the old refresh token is dead. A retry of the same
 * refresh within the replay window gets the same tokens back (lost responses, two tabs); a reuse
 * after the window is treated as theft and ends the whole grant.
 */
import type { AppContext } from '../../context.js';
import { ApiError, invalidRequest } from '../../errors.js';
import { answeredScope, readScopeRequest } from '../../domain/scope-request.js';
import { formatScopes, parseScopeString } from '../../domain/scopes.js';
import { tokenKey } from '../../security/secrets.js';
import type { RefreshRotation } from '../../store/refresh-rotation.js';
import { ANY_CLIENT, bindings, type Grant, type TokenRequest } from '../grant.js';
import { mintTokenPair, type TokenResponse } from '../issue-tokens.js';
import { isRegisteredRedirectUri } from '../redirect-uri.js';
import { openReplay, replayKey, sealReplay } from '../replay.js';

const invalidGrant = (description: string) => new ApiError('invalid_grant', description);

/**
 * RFC 6749 §6: an optional `scope` may narrow the new access token, never widen it. It is read as at
 * the authorization endpoint (domain/scope-request.ts) within the scope the token holds: a Fitbit
 * word stands for those of its scopes the token has, so a client repeating the words it asked with
 * (as oauthlib's clients do at every refresh) is answered the same token.
 */
function narrowedScope(granted: string, requested: string): { scope: string; worded: string | null } {
  const read = readScopeRequest(requested, parseScopeString(granted));
  if (!read.ok) throw new ApiError('invalid_scope', 'scope must be a non-empty subset of the scope originally granted');
  return { scope: formatScopes(read.scopes), worded: read.worded };
}

/** Rotates the refresh token the authenticated client sent. */
async function handle(ctx: AppContext, { client, body, dpop }: TokenRequest): Promise<TokenResponse> {
  const rawToken = body.refresh_token;
  if (!rawToken) throw invalidRequest('refresh_token is required');
  const { rotation } = ctx.stores;
  const tokenHash = tokenKey(rawToken);
  const token = await rotation.find(tokenHash);
  const owned = client.owns(token);
  // redirect_uri is optional here, but when sent it must match a registered one (docs/oauth.md).
  if (body.redirect_uri !== undefined && !isRegisteredRedirectUri(client.app, body.redirect_uri)) {
    throw new ApiError('access_denied', 'redirect_uri does not exactly match a registered redirect URI');
  }
  const now = ctx.clock();
  if (!owned || token.expires_at <= now) throw invalidGrant('the refresh token is unknown, expired or revoked');
  // RFC 9449 §5: a bound refresh token is used only with a proof of its key.
  if (token.jkt !== null) {
    if (dpop === undefined) throw new ApiError('invalid_dpop_proof', 'this refresh token is bound to a DPoP key: send a DPoP proof of that key');
    if (dpop.jkt !== token.jkt) throw invalidGrant('the DPoP proof is not of the key the refresh token is bound to');
  }
  const narrowing = body.scope === undefined ? null : narrowedScope(token.scope, body.scope);
  const scope = narrowing?.scope ?? token.scope;
  // The replay key derives from the raw old token alone (never from anything stored), once.
  const key = replayKey(rawToken);

  if (token.rotated_at === null) {
    const minted = mintTokenPair(ctx.config, now, {
      familyId: token.family_id,
      grantId: token.grant_id,
      appId: token.app_id,
      userId: token.user_id,
      scope,
      // Carried along the chain, as the scope is: every refresh without `scope` answers in these words.
      requestedScope: token.requested_scope,
      ...bindings(client, dpop),
    });
    // The successor refresh token keeps the full granted scope (RFC 6749 §6).
    minted.refresh.scope = token.scope;
    // A refresh that sends `scope` is answered in the words of its own `scope`.
    if (narrowing) minted.response.scope = answeredScope(scope, narrowing.worded);
    const replayResponse = sealReplay(key, {
      access_token: minted.response.access_token,
      refresh_token: minted.response.refresh_token,
      scope: minted.response.scope,
      access_expires_at: minted.access.expires_at,
      token_type: minted.response.token_type,
    });
    // The conditional UPDATE and the new pair commit together, or nothing does.
    if (await rotation.rotate({ oldHash: tokenHash, now, replayResponse, access: minted.access, refresh: minted.refresh })) {
      ctx.metrics.tokens.inc({ event: 'refreshed' });
      return minted.response;
    }
  }
  return replayOrRevoke(ctx, rotation, key, tokenHash, now);
}

/** The token was rotated before (by this request's twin, or long ago). */
async function replayOrRevoke(ctx: AppContext, rotation: RefreshRotation, key: Buffer, tokenHash: string, now: number): Promise<TokenResponse> {
  const token = await rotation.find(tokenHash);
  if (!token || token.rotated_at === null) throw invalidGrant('the refresh token is unknown, expired or revoked');
  if (now - token.rotated_at <= ctx.config.refreshReplayWindow && token.replay_response !== null) {
    const payload = openReplay(key, token.replay_response);
    const successor = payload && (await rotation.find(tokenKey(payload.refresh_token)));
    if (payload && successor) {
      ctx.metrics.tokens.inc({ event: 'replayed' });
      return {
        access_token: payload.access_token,
        token_type: payload.token_type ?? 'Bearer',
        expires_in: Math.max(0, payload.access_expires_at - now),
        refresh_token: payload.refresh_token,
        scope: payload.scope,
        user_id: token.user_id,
      };
    }
    throw invalidGrant('the refresh token is unknown, expired or revoked');
  }
  // RFC 9700 §4.14.2: reuse of a rotated refresh token means it may be stolen; end the grant.
  await ctx.stores.grants.endForReuse(token.grant_id, now);
  ctx.metrics.tokens.inc({ event: 'reuse_detected' });
  throw invalidGrant('the refresh token was already used; access for this app has been revoked');
}

/** Public clients too: a public client's refresh token is the only proof it needs (RFC 9700 §4.14.2). */
export const refreshToken: Grant = { grantType: 'refresh_token', clients: ANY_CLIENT, handle };
