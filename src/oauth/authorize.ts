/**
 * The authorization request (RFC 6749 §4.1.1, docs/oauth.md) as plain functions: validating its
 * parameters, deciding whether consent is remembered, and issuing the code. The browser side
 * (src/web/pages/authorize.ts) only connects these to HTTP and the pages.
 */
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import { hashCredential, newCredential } from '../security/secrets.js';
import type { App } from '../store/apps.js';
import type { AuthorizationCode } from '../store/codes.js';
import type { Grant } from '../store/grants.js';
import { isValidCodeChallenge } from './pkce.js';
import { pushedParameters } from './pushed-requests.js';
import { requestedRedirectUri } from './redirect-uri.js';
import { readScopeRequest, type ScopeRequest } from '../domain/scope-request.js';
import { formatScopes, parseScopeString } from '../domain/scopes.js';

export interface AuthorizationRequest {
  app: App;
  redirectUri: string;
  state: string | undefined;
  /** The Stride scopes asked for, canonical order. */
  scopes: string[];
  /**
   * The `scope` parameter as the app worded it, when it used Fitbit's scope words (remembered on the
   * code: the token responses name those words, domain/scope-request.ts); null otherwise.
   */
  requestedScope: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  prompt: string | undefined;
  /** The pushed request (RFC 9126) this request came from; null for a plain one. */
  pushed: PushedOrigin | null;
}

/** The request_uri an authorization request was given, and its stored hash. */
export interface PushedOrigin {
  requestUri: string;
  requestUriHash: string;
}

export type AuthorizationCheck =
  | { ok: true; request: AuthorizationRequest }
  /** RFC 6749 §4.1.2.1: without a trustworthy redirect URI the user sees an error page. */
  | { ok: false; page: string; /** The app, when the client id named one (the redirect URI was the problem). */ app?: App }
  /**
   * RFC 6749 §4.1.2.1: an error the app should hear of at its (registered) redirect URI. Whether
   * the browser is sent there at once is decided by errorRedirectIsVetted (RFC 9700 §4.11.2).
   */
  | { ok: false; page?: undefined; app: App; redirectUri: string; error: string; description: string; redirectTo: string };

export type AuthorizationRefusal = Extract<AuthorizationCheck, { ok: false }>;

export type Parameters = Record<string, string | undefined>;

/** Query or form values as single strings; names sent more than once are listed apart. */
export function singleValues(input: unknown): { params: Parameters; repeated: string[] } {
  const params: Parameters = {};
  const repeated: string[] = [];
  if (input && typeof input === 'object') {
    for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
      if (Array.isArray(value)) repeated.push(name);
      else if (typeof value === 'string') params[name] = value;
    }
  }
  return { params, repeated };
}

/** Adds parameters to a redirect URI, keeping its own query, plus `iss` (RFC 9207). */
export function authorizationResponseUrl(config: Config, redirectUri: string, params: Parameters): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  url.searchParams.append('iss', config.publicUrl);
  return url.toString();
}

/**
 * An authorization request as the authorization endpoint receives it: its own parameters, or
 * `client_id` with the `request_uri` of a pushed request (RFC 9126 §4), whose stored parameters
 * are then the request (any others sent are ignored). `grace`: seconds past the request_uri's
 * expiry still accepted — for the consent decision, not for the request itself.
 */
export async function checkAuthorizationRequest(
  ctx: AppContext,
  params: Parameters,
  repeated: string[],
  grace = 0,
): Promise<AuthorizationCheck> {
  const requestUri = params.request_uri;
  if (requestUri === undefined && !repeated.includes('request_uri')) return validateAuthorizationRequest(ctx, params, repeated, 'direct');
  if (['client_id', 'request_uri'].some((name) => repeated.includes(name))) return { ok: false, page: 'The request repeats client_id or request_uri.' };
  const clientId = params.client_id;
  if (!clientId) return { ok: false, page: 'The request has no client_id (RFC 9126 §4 requires it with request_uri).' };
  const app = await ctx.stores.apps.findByClientId(clientId);
  if (!app) return { ok: false, page: 'No app is registered with this client_id.' };
  const pushed = await pushedParameters(ctx, app, requestUri!, grace);
  if (!pushed.ok) return { ok: false, page: pushed.problem, app };
  return validateAuthorizationRequest(ctx, pushed.params, [], { requestUri: requestUri!, requestUriHash: pushed.requestUriHash });
}

/**
 * The checks of an authorization request's parameters (RFC 6749 §4.1.1), made once for both ways it
 * arrives: at the authorization endpoint (`direct`, or the parameters of a pushed request) and at
 * the pushed authorization request endpoint (`pushing`, RFC 9126 §2.1).
 */
export async function validateAuthorizationRequest(
  ctx: AppContext,
  params: Parameters,
  repeated: string[],
  via: 'direct' | 'pushing' | PushedOrigin,
): Promise<AuthorizationCheck> {
  if (['client_id', 'redirect_uri', 'redirect_url'].some((name) => repeated.includes(name))) {
    return { ok: false, page: 'The request repeats client_id or the redirect URI.' };
  }
  const clientId = params.client_id;
  if (!clientId) return { ok: false, page: 'The request has no client_id.' };
  const app = await ctx.stores.apps.findByClientId(clientId);
  if (!app) return { ok: false, page: 'No app is registered with this client_id.' };
  const redirect = requestedRedirectUri(app, params);
  if ('problem' in redirect) return { ok: false, page: redirect.problem, app };

  const state = repeated.includes('state') ? undefined : params.state;
  const fail = (error: string, description: string): AuthorizationCheck => ({
    ok: false,
    app,
    redirectUri: redirect.uri,
    error,
    description,
    redirectTo: authorizationResponseUrl(ctx.config, redirect.uri, { error, error_description: description, state }),
  });

  if (repeated.length > 0) return fail('invalid_request', `parameters must not be repeated: ${repeated.join(', ')}`);
  // RFC 9126 §6: such an app's requests come only through the pushed authorization request endpoint.
  if (app.requirePar && via === 'direct') {
    return fail('invalid_request', 'this app requires pushed authorization requests: push the request to the pushed_authorization_request_endpoint and send its request_uri');
  }
  if (params.response_type === undefined) return fail('invalid_request', 'response_type is required');
  if (params.response_type !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');
  // RFC 6749 §4.1.2.1: an app not allowed the code grant (a device's app) is given no code to spend.
  if (!app.grantTypes.includes('authorization_code')) return fail('unauthorized_client', 'this app is not allowed the authorization_code grant');

  const asked = requestedScopes(app, params.scope);
  if (!asked.ok) return fail('invalid_scope', scopeProblem(asked));

  const challenge = params.code_challenge;
  const method = params.code_challenge_method;
  if (challenge !== undefined) {
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!isValidCodeChallenge(challenge)) return fail('invalid_request', 'code_challenge must be the 43-character base64url S256 hash of the code_verifier');
  } else if (method !== undefined) {
    return fail('invalid_request', 'code_challenge_method was sent without code_challenge');
  }
  if (app.isPublic && challenge === undefined) {
    return fail('invalid_request', 'PKCE (code_challenge with code_challenge_method=S256) is required for public clients');
  }

  return {
    ok: true,
    request: {
      app,
      redirectUri: redirect.uri,
      state,
      scopes: asked.scopes,
      requestedScope: asked.worded,
      codeChallenge: challenge ?? null,
      codeChallengeMethod: challenge === undefined ? null : 'S256',
      prompt: params.prompt,
      pushed: typeof via === 'object' ? via : null,
    },
  };
}

/**
 * What a request's `scope` asks of `app` (RFC 6749 §3.3; docs/oauth.md, "Fitbit clients"): Stride's
 * scope names, each one the app registered, and Fitbit's words, which stand for those of their
 * scopes the app registered. Without `scope` the app's registered set is asked for.
 */
export function requestedScopes(app: App, scope: string | undefined): ScopeRequest {
  if (scope === undefined || scope.trim() === '') return { ok: true, scopes: formatScopes(app.scopes).split(' '), worded: null };
  return readScopeRequest(scope, app.scopes);
}

/** The `error_description` of an `invalid_scope`. */
export function scopeProblem(refused: Extract<ScopeRequest, { ok: false }>): string {
  switch (refused.problem) {
    case 'unknown':
      return `unknown scope "${shortened(refused.scope)}"`;
    case 'not_allowed':
      return `this app is not registered for the scope "${shortened(refused.scope)}"`;
    case 'nothing':
      return 'the request asks for no kind of data that Stride holds and this app is registered for';
  }
}

/** Request text quoted in an error description: short, since the error page shows it too. */
function shortened(value: string): string {
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}

/**
 * RFC 9700 §4.11.2: an error is redirected at once only to a client a person has vetted — the
 * browser is signed in and its user already holds a grant for the app (so approved it on a
 * consent page). Anyone can register an app with any https redirect URI; without this rule an
 * authorization request with a deliberate error would make Stride an open redirector. Otherwise
 * the error page offers the way back as a link the person chooses to follow (docs/oauth.md).
 */
export async function errorRedirectIsVetted(ctx: AppContext, userId: string | undefined, app: App): Promise<boolean> {
  if (userId === undefined) return false;
  return (await ctx.stores.grants.find(userId, app.id)) !== undefined;
}

/**
 * Who made the app, as the pages name it: its owner's display name, read only when a page shows it;
 * null for an app that registered itself (RFC 7591). Such an app belongs to REGISTRATION_OWNER, who
 * did not make it: naming the owner would lend an anonymous app the operator's name (RFC 7591 §5:
 * its metadata is self-asserted).
 */
export async function developerName(ctx: AppContext, app: App): Promise<string | null> {
  if (app.registrationTokenHash !== null) return null;
  const owner = await ctx.stores.users.findById(app.ownerId);
  return owner?.display_name ?? 'unknown developer';
}

/** Whether the user's grant for the app already covers every requested scope. */
export function grantCoversRequest(grant: Grant | undefined, request: AuthorizationRequest): boolean {
  if (!grant) return false;
  const granted = new Set(parseScopeString(grant.scope));
  return request.scopes.every((scope) => granted.has(scope));
}

/**
 * Consent is remembered (no page shown) when the grant covers every requested scope, unless the
 * app asks for the page again with `prompt=consent` — and never for a public client: anyone can
 * start a request with its client_id and a PKCE pair of their own, so only the person's own
 * click proves that this request comes from the app they approved (RFC 8252 §8.6). Confidential
 * clients prove themselves at the token endpoint with their secret.
 */
export function consentIsRemembered(grant: Grant | undefined, request: AuthorizationRequest): boolean {
  if (request.app.isPublic || request.prompt?.split(' ').includes('consent')) return false;
  return grantCoversRequest(grant, request);
}

/**
 * Records the consent (upserting the grant) and issues a code bound to the app, user, redirect
 * URI, scopes and PKCE challenge (RFC 6749 §4.1.2). Returns the redirect to send the browser to.
 */
export async function approveAuthorization(
  ctx: AppContext,
  request: AuthorizationRequest,
  userId: string,
  grantedScopes: string[],
): Promise<string> {
  const now = ctx.clock();
  const scope = formatScopes(grantedScopes);
  const code = newCredential('authorizationCode');
  const recorded = await ctx.stores.grants.recordConsent(
    { userId, appId: request.app.id, newGrantId: randomUUID(), granted: grantedScopes, issue: { code: codeRow(ctx, request, code, { userId, scope }, now) }, now },
    (previousScope) => consentOutcome(parseScopeString(previousScope), request.scopes, grantedScopes),
  );
  if (!recorded) {
    return authorizationResponseUrl(ctx.config, request.redirectUri, {
      error: 'invalid_scope',
      error_description: 'the app is no longer registered for a requested scope',
      state: request.state,
    });
  }
  return authorizationResponseUrl(ctx.config, request.redirectUri, { code, state: request.state });
}

/**
 * What a consent page changes in the user's grant. The page asks only about the requested scopes:
 * a requested scope left unticked is withdrawn (if it was granted before), one ticked is added, and
 * scopes granted earlier but not asked about this time stay granted — an app asking for one more
 * scope later (incremental authorization) does not lose what the user already gave it.
 */
export function consentOutcome(
  previous: readonly string[],
  requested: readonly string[],
  granted: readonly string[],
): { grantScope: string; withdrawn: string[] } {
  const withdrawn = previous.filter((name) => requested.includes(name) && !granted.includes(name));
  const kept = previous.filter((name) => !withdrawn.includes(name));
  return { grantScope: formatScopes([...kept, ...granted]), withdrawn };
}

/** For remembered consent: a code for exactly the requested scopes, without touching the grant. */
export async function reissueAuthorization(ctx: AppContext, request: AuthorizationRequest, userId: string, grant: Grant): Promise<string> {
  const code = newCredential('authorizationCode');
  const scope = formatScopes(request.scopes);
  await ctx.stores.codes.insert({ ...codeRow(ctx, request, code, { userId, scope }, ctx.clock()), grant_id: grant.id });
  return authorizationResponseUrl(ctx.config, request.redirectUri, { code, state: request.state });
}

/** The stored form of a new code: its hash and everything it is bound to but its grant. */
function codeRow(
  ctx: AppContext,
  request: AuthorizationRequest,
  code: string,
  bound: { userId: string; scope: string },
  now: number,
): Omit<AuthorizationCode, 'grant_id'> {
  return {
    code_hash: hashCredential(code),
    app_id: request.app.id,
    user_id: bound.userId,
    redirect_uri: request.redirectUri,
    scope: bound.scope,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallengeMethod,
    expires_at: now + ctx.config.authCodeTtl,
    consumed_at: null,
    created_at: now,
    requested_scope: request.requestedScope,
  };
}

export function deniedRedirect(ctx: AppContext, request: AuthorizationRequest, description: string): string {
  return authorizationResponseUrl(ctx.config, request.redirectUri, {
    error: 'access_denied',
    error_description: description,
    state: request.state,
  });
}
