/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, docs/oauth.md). The code is single-use: the
 * conditional UPDATE that consumes it runs in the transaction that stores the tokens, so of
 * concurrent exchanges on any processes exactly one succeeds. A second use ends every token issued
 * from the code (RFC 6749 §4.1.2, RFC 9700 §4.14).
 */
import type { AppContext } from '../../context.js';
import { ApiError, invalidRequest } from '../../errors.js';
import { hashCredential } from '../../security/secrets.js';
import type { AuthorizationCode } from '../../store/codes.js';
import { ANY_CLIENT, bindings, type Grant, type TokenRequest } from '../grant.js';
import { mintTokenPair, type TokenResponse } from '../issue-tokens.js';
import { isValidCodeVerifier, verifierMatches } from '../pkce.js';
import { isRegisteredRedirectUri } from '../redirect-uri.js';

const invalidGrant = (description: string) => new ApiError('invalid_grant', description);

/** RFC 7636 §4.6, and RFC 9700 §2.1.1: a verifier for a code without a challenge is refused too. */
function checkPkce(code: AuthorizationCode, verifier: string | undefined): void {
  if (verifier !== undefined && !isValidCodeVerifier(verifier)) {
    throw invalidRequest('code_verifier must be 43-128 characters of [A-Za-z0-9-._~]');
  }
  if (code.code_challenge === null) {
    if (verifier !== undefined) throw invalidGrant('code_verifier was sent but the authorization request had no code_challenge');
    return;
  }
  if (verifier === undefined) throw invalidGrant('code_verifier is required: the authorization request used PKCE');
  if (!verifierMatches(verifier, code.code_challenge)) throw invalidGrant('code_verifier does not match the code_challenge');
}

async function refuseReuse(ctx: AppContext, grantId: string, codeHash: string): Promise<never> {
  await ctx.stores.tokens.deleteFamily(grantId, codeHash);
  throw invalidGrant('the authorization code was already used; the tokens issued from it are revoked');
}

async function handle(ctx: AppContext, { client, body, dpop }: TokenRequest): Promise<TokenResponse> {
  const { code: rawCode, redirect_uri: redirectUri, code_verifier: verifier } = body;
  if (!rawCode) throw invalidRequest('code is required');
  if (redirectUri === undefined) throw invalidRequest('redirect_uri is required');
  const now = ctx.clock();
  const codeHash = hashCredential(rawCode);
  const code = await ctx.stores.codes.find(codeHash);
  // A code of another client is treated as unknown (RFC 6749 §4.1.3), without revoking anything.
  if (!client.owns(code)) throw invalidGrant('the authorization code is unknown, expired or already used');
  if (code.consumed_at !== null) return refuseReuse(ctx, code.grant_id, codeHash);
  if (code.expires_at <= now) throw invalidGrant('the authorization code has expired');
  // A redirect_uri that is not exactly the one of the request is access_denied (docs/oauth.md, as the first interface answered).
  if (redirectUri !== code.redirect_uri || !isRegisteredRedirectUri(client.app, redirectUri)) {
    throw new ApiError('access_denied', 'redirect_uri does not exactly match the redirect URI of the authorization request');
  }
  checkPkce(code, verifier);

  const minted = mintTokenPair(ctx.config, now, {
    familyId: codeHash,
    grantId: code.grant_id,
    appId: code.app_id,
    userId: code.user_id,
    scope: code.scope,
    requestedScope: code.requested_scope,
    ...bindings(client, dpop),
  });
  if (!(await ctx.stores.codes.redeem(codeHash, now, minted.access, minted.refresh))) {
    // Another exchange consumed it first, or it expired meanwhile.
    const current = await ctx.stores.codes.find(codeHash);
    if (current?.consumed_at != null) return refuseReuse(ctx, current.grant_id, codeHash);
    throw invalidGrant('the authorization code is unknown, expired or already used');
  }
  ctx.metrics.tokens.inc({ event: 'issued' });
  return minted.response;
}

/** Public clients too: theirs must use PKCE, which the authorization request already required. */
export const authorizationCode: Grant = { grantType: 'authorization_code', clients: ANY_CLIENT, handle };
