/**
 * Bearer-token authentication for the resource API (RFC 6750). Registered only inside the
 * resource routes' plugin scope, so it never runs on the token endpoint or the pages.
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError, REALM } from '../errors.js';
import { tokenKey } from '../security/secrets.js';
import type { BearerGrant, BearerLookup } from '../store/bearer-lookup.js';

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

/** 401 with the challenge of RFC 6750 §3; a request with no credentials gets no error code. */
export function invalidToken(description: string, hadToken: boolean): ApiError {
  const challenge = hadToken
    ? `Bearer realm="${REALM}", error="invalid_token", error_description="${quote(description)}"`
    : `Bearer realm="${REALM}"`;
  return new ApiError('invalid_token', description, { 'www-authenticate': challenge });
}

export function insufficientScope(scope: string): ApiError {
  return new ApiError('insufficient_scope', `this endpoint needs the scope ${scope}`, {
    'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
  });
}

import { bearerToken } from '../http/bearer-token.js';

export { bearerToken };

export async function bearerAuth(app: FastifyInstance): Promise<void> {
  app.decorateRequest('auth', null as unknown as BearerGrant);
  const { stores, clock } = app.ctx;
  const lookup = stores.bearer;
  // A callback hook: on SQLite the lookup is synchronous, and the request goes on without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    const token = bearerToken(request);
    if (token === null) return done(invalidToken('an access token is required (Authorization: Bearer …)', false));
    if (token === '') return done(invalidToken('the Authorization header is not a Bearer token', true));
    const now = clock();
    let found: ReturnType<BearerLookup['find']>;
    try {
      found = lookup.find(tokenKey(token), now);
    } catch (error) {
      return done(error as Error);
    }
    if (found instanceof Promise) {
      found.then((grant) => done(accept(request, grant, now)), done);
    } else {
      done(accept(request, found, now));
    }
  });

  function accept(request: FastifyRequest, grant: BearerGrant | undefined, now: number): ApiError | undefined {
    if (!grant) return invalidToken('the access token is unknown, expired or revoked', true);
    request.auth = grant;
    if (grant.grantLastUsedAt === null || now - grant.grantLastUsedAt >= LAST_USED_RESOLUTION_SECONDS) {
      const warn = (error: unknown) => request.log.warn({ err: error }, 'could not record when the grant was last used');
      try {
        const touched = lookup.touch(grant.grantId, now);
        if (touched instanceof Promise) touched.catch(warn);
      } catch (error) {
        warn(error);
      }
    }
    return undefined;
  }
}

/** An onRequest hook that answers 403 `insufficient_scope` unless the token carries `scope`. */
export function requireScope(scope: string): onRequestHookHandler {
  return (request, _reply, done) => {
    done(request.auth.scopes.includes(scope) ? undefined : insufficientScope(scope));
  };
}
