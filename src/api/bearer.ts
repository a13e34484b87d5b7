/**
 * Access-token authentication for the resource API: bearer tokens (RFC 6750) and DPoP-bound tokens
 * (RFC 9449 §7: `Authorization: DPoP <token>` with a proof of the bound key carrying `ath`).
 * Registered only inside the resource routes' plugin scope, so it never runs on the token endpoint
 * or the pages.
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError, REALM } from '../errors.js';
import { tokenKey } from '../security/secrets.js';
import type { BearerGrant } from '../store/bearer-lookup.js';
import { checkProof, DPOP_ALGORITHMS, proofHeader, rememberProof } from '../oauth/dpop.js';

/** How stale a grant's "last used" time may get before a request refreshes it. */
const LAST_USED_RESOLUTION_SECONDS = 60;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearer hook on resource routes: the token's grant and its user's profile. */
    auth: BearerGrant;
  }
}

function quote(value: string): string {
  return value.replace(/["\\]/g, '');
}

/** The DPoP challenge of RFC 9449 §7.1, naming the accepted algorithms; with an error when there is one. */
function dpopChallenge(error?: string, description?: string): string {
  const base = `DPoP algs="${DPOP_ALGORITHMS.join(' ')}"`;
  return error === undefined ? base : `${base}, error="${error}", error_description="${quote(description ?? '')}"`;
}

/**
 * 401 with the challenges of RFC 6750 §3 and RFC 9449 §7.1; a request with no credentials gets no
 * error code. The error goes in the challenge of the scheme the request used.
 */
export function invalidToken(description: string, hadToken: boolean, scheme: 'Bearer' | 'DPoP' = 'Bearer'): ApiError {
  const error = `error="invalid_token", error_description="${quote(description)}"`;
  const bearer = hadToken && scheme === 'Bearer' ? `Bearer realm="${REALM}", ${error}` : `Bearer realm="${REALM}"`;
  const dpop = hadToken && scheme === 'DPoP' ? dpopChallenge('invalid_token', description) : dpopChallenge();
  return new ApiError('invalid_token', description, { 'www-authenticate': `${bearer}, ${dpop}` });
}

/** The DPoP proof checks of the resource API answer 401 with both challenges (RFC 9449 §7.1). */
const PROOF_STATUS = { status: 401 as const, challenge: (error: string, description: string) => `Bearer realm="${REALM}", ${dpopChallenge(error, description)}` };

export function insufficientScope(scope: string): ApiError {
  return new ApiError('insufficient_scope', `this endpoint needs the scope ${scope}`, {
    'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
  });
}

import { bearerToken } from '../http/bearer-token.js';
import { demandsScope } from '../http/schemas.js';

export { bearerToken };

/** The token of `Authorization: DPoP <token>` (RFC 9449 §7.1); null when the scheme is another. */
function dpopToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match ? match[1]! : null;
}

export async function bearerAuth(app: FastifyInstance): Promise<void> {
  app.decorateRequest('auth', null as unknown as BearerGrant);
  const { stores, clock } = app.ctx;
  const lookup = stores.bearer;
  const { config } = app.ctx;
  const nonceKey = config.dpopNonce ? stores.serverSecret('dpop_nonce', clock) : undefined;

  /** RFC 9449 §7.1: the proof (with `ath`) is verified, then the token must be bound to its key. */
  async function acceptDpop(request: FastifyRequest, token: string): Promise<ApiError | undefined> {
    const proof = proofHeader(request.headers, PROOF_STATUS);
    if (proof === undefined) return new ApiError('invalid_dpop_proof', 'a DPoP proof is required with Authorization: DPoP', { 'www-authenticate': `Bearer realm="${REALM}", ${dpopChallenge('invalid_dpop_proof', 'a DPoP proof is required')}` }, 401);
    const verified = await checkProof(app.ctx, proof, {
      ...PROOF_STATUS,
      method: request.method,
      url: `${config.publicUrl}${request.url}`,
      accessToken: token,
      nonceKey: nonceKey && (await nonceKey()),
    });
    const now = clock();
    // The jti's record and the token's lookup go to the database together (each with the other
    // requests' of the turn); a replayed proof is refused whatever the token.
    const key = tokenKey(token);
    const [, grant] = await Promise.all([rememberProof(app.ctx, verified, PROOF_STATUS), lookup.find(key, now)]);
    // §4.3 step 12: the proof's key must be the one the token is bound to; a bearer token has none.
    if (grant && grant.jkt === null) return refuse(request, key, invalidToken('the access token is not bound to a DPoP key: send it as Authorization: Bearer', true, 'DPoP'));
    if (grant && grant.jkt !== verified.jkt) return refuse(request, key, invalidToken('the access token is bound to another DPoP key', true, 'DPoP'));
    return accept(request, grant, now, key, 'DPoP');
  }

  app.addHook('onRequest', (request, _reply, done) => {
    const bound = dpopToken(request.headers.authorization);
    if (bound !== null) {
      acceptDpop(request, bound).then(done, done);
      return;
    }
    const token = bearerToken(request);
    if (token === null) return done(invalidToken('an access token is required (Authorization: Bearer …)', false));
    if (token === '') return done(invalidToken('the Authorization header is not a Bearer or DPoP token', true));
    const now = clock();
    const key = tokenKey(token);
    lookup.find(key, now).then((grant) => done(accept(request, grant, now, key)), done);
  });

  function accept(request: FastifyRequest, grant: BearerGrant | undefined, now: number, key: string, scheme: 'Bearer' | 'DPoP' = 'Bearer'): ApiError | undefined {
    if (!grant) return refuse(request, key, invalidToken('the access token is unknown, expired or revoked', true, scheme));
    // RFC 9449 §7.2: a DPoP-bound token is never accepted as a bearer token.
    if (scheme === 'Bearer' && grant.jkt !== null) return refuse(request, key, invalidToken('the access token is bound to a DPoP key: send it as Authorization: DPoP with a proof', true));
    request.auth = grant;
    if (grant.grantLastUsedAt === null || now - grant.grantLastUsedAt >= LAST_USED_RESOLUTION_SECONDS) {
      lookup.touch(grant.grantId, now).catch((error: unknown) => request.log.warn({ err: error }, 'could not record when the grant was last used'));
    }
    return undefined;
  }
}

/**
 * A refused token's key, kept for usage (http/usage.ts): the app it was issued to, if any, is found
 * when the counts are written, so a refusal costs no query here and a valid token none at all.
 */
function refuse(request: FastifyRequest, key: string, error: ApiError): ApiError {
  request.refusedTokenKey = key;
  return error;
}

/** An onRequest hook that answers 403 `insufficient_scope` unless the token carries `scope`. */
export function requireScope(scope: string): onRequestHookHandler {
  const hook: onRequestHookHandler = (request, _reply, done) => {
    done(request.auth.scopes.includes(scope) ? undefined : insufficientScope(scope));
  };
  return demandsScope(hook, scope);
}
