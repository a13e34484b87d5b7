/**
 * The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636) and the token endpoint's two
 * grants an app calls, code exchange and refresh (RFC 6749 §4.1.3, §6) — what generated types
 * cannot say: the order of the steps, the state and issuer checks, client authentication, and
 * resending a refresh whose answer was lost.
 */
import { errorFromAnswer, StrideError } from './errors.js';
import type { paths } from './generated/api.js';
import { randomToken, s256Challenge } from './pkce.js';
import { sleep } from './retries.js';
import type { Tokens } from './tokens.js';
import type { Transport } from './transport.js';

/** The token endpoint's success body, as /openapi.json describes it. */
type TokenResponse = paths['/oauth2/token']['post']['responses'][200]['content']['application/json'];

export interface OAuthSettings {
  /** Stride's PUBLIC_URL, e.g. `https://stride.example`. */
  baseUrl: string;
  /** Where the authorization endpoint is (Stride's AUTH_URL); default `baseUrl`. */
  authUrl?: string | undefined;
  clientId: string;
  /** Confidential apps only; a public app (PKCE alone) has none. */
  clientSecret?: string | undefined;
  transport: Transport;
  /**
   * How long a lost refresh is sent again, in seconds. Keep it below the server's
   * REFRESH_REPLAY_WINDOW (default 30): within it the same refresh token gets the same answer.
   */
  refreshRetryWindowSeconds: number;
  /** Per request to the token endpoint, in milliseconds. */
  timeoutMs: number;
}

export interface AuthorizationRequest {
  /** Send the person's browser here. */
  url: string;
  /** Keep with the person's session; the callback must bring it back. */
  state: string;
  /** Keep with the person's session, secret; the code exchange needs it. */
  codeVerifier: string;
}

export interface AuthorizationOptions {
  redirectUri: string;
  /** Default: every scope the app is registered for. */
  scope?: string[] | undefined;
  /** Default: a new random value. */
  state?: string | undefined;
  /** `consent` always shows the consent page. */
  prompt?: 'consent' | undefined;
}

function endpoint(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

/** The authorization URL with PKCE S256 and state (RFC 7636 §4.3). */
export async function authorizationRequest(settings: OAuthSettings, options: AuthorizationOptions): Promise<AuthorizationRequest> {
  const state = options.state ?? randomToken();
  const codeVerifier = randomToken();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: options.redirectUri,
    state,
    code_challenge: await s256Challenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  if (options.scope !== undefined) query.set('scope', options.scope.join(' '));
  if (options.prompt !== undefined) query.set('prompt', options.prompt);
  return { url: `${endpoint(settings.authUrl ?? settings.baseUrl, '/oauth2/authorize')}?${query}`, state, codeVerifier };
}

/**
 * The code of the redirect back to the app, after checking that it answers this request (`state`)
 * and comes from this server (`iss`, RFC 9207 §2.4); an error sent back instead is thrown.
 */
export function codeFromCallback(settings: OAuthSettings, callbackUrl: string | URL, expectedState: string): string {
  const params = new URL(callbackUrl).searchParams;
  const state = params.get('state');
  if (state !== expectedState) throw new StrideError({ error: 'invalid_state', errorDescription: 'the state of the callback is not the one of this authorization request' });
  // Stride names itself in every authorization response (it advertises
  // authorization_response_iss_parameter_supported): a callback without `iss` is not its (RFC 9207 §2.4).
  const issuer = params.get('iss');
  if (issuer === null || issuer.replace(/\/+$/, '') !== settings.baseUrl.replace(/\/+$/, '')) {
    throw new StrideError({ error: 'invalid_issuer', errorDescription: issuer === null ? `the callback names no issuer (iss); ${settings.baseUrl} always does` : `the callback comes from ${issuer}, not ${settings.baseUrl}` });
  }
  const error = params.get('error');
  if (error !== null) throw new StrideError({ error, errorDescription: params.get('error_description') ?? undefined });
  const code = params.get('code');
  if (code === null || code === '') throw new StrideError({ error: 'invalid_request', errorDescription: 'the callback carries neither code nor error' });
  return code;
}

/** HTTP Basic of the form-encoded id and secret (RFC 6749 §2.3.1). */
export function basicCredentials(clientId: string, clientSecret: string): string {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${btoa(`${encode(clientId)}:${encode(clientSecret)}`)}`;
}

/** Client authentication (RFC 6749 §2.3): Basic for a confidential app, the id alone in the form for a public one. */
function authenticate(settings: OAuthSettings, form: URLSearchParams): Record<string, string> {
  if (settings.clientSecret === undefined) {
    form.set('client_id', settings.clientId);
    return {};
  }
  return { authorization: basicCredentials(settings.clientId, settings.clientSecret) };
}

function tokensOf(body: TokenResponse, now: number): Tokens {
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    expiresAt: now + body.expires_in,
    scope: body.scope === undefined || body.scope === '' ? [] : body.scope.split(' '),
    tokenType: body.token_type,
  };
}

/** One POST to the token endpoint; its answer as tokens, or a StrideError. */
async function tokenRequest(settings: OAuthSettings, fields: Record<string, string>): Promise<Tokens> {
  const form = new URLSearchParams(fields);
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...authenticate(settings, form) };
  const answer = await settings.transport.send({
    method: 'POST',
    url: endpoint(settings.baseUrl, '/oauth2/token'),
    headers,
    body: form.toString(),
    signal: AbortSignal.timeout(settings.timeoutMs),
  });
  if (answer.status !== 200) throw await errorFromAnswer(answer);
  return tokensOf(JSON.parse(await answer.text()) as TokenResponse, Math.floor(Date.now() / 1000));
}

/** The code exchange (RFC 6749 §4.1.3) with the PKCE verifier. */
export function exchangeCode(settings: OAuthSettings, code: string, codeVerifier: string, redirectUri: string): Promise<Tokens> {
  return tokenRequest(settings, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: codeVerifier });
}

/** Worth sending again: the answer was lost or the server could not answer yet. */
function transient(error: unknown): boolean {
  if (error instanceof StrideError) return error.status === 429 || (error.status !== undefined && error.status >= 500);
  return true; // a network error or a timeout: the rotation may have happened, the answer is lost
}

/**
 * A refresh (RFC 6749 §6), sent again with the same refresh token when its answer is lost or the
 * server is away for a moment, for as long as Stride's replay window gives the same answer to the
 * same token. A refusal (invalid_grant: the grant ended) is thrown at once.
 */
export async function refreshTokens(settings: OAuthSettings, refreshToken: string): Promise<Tokens> {
  const deadline = Date.now() + settings.refreshRetryWindowSeconds * 1000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await tokenRequest(settings, { grant_type: 'refresh_token', refresh_token: refreshToken });
    } catch (error) {
      const wait = error instanceof StrideError && error.retryAfter !== undefined ? error.retryAfter : Math.min(0.25 * 2 ** attempt, 4);
      if (!transient(error) || Date.now() + wait * 1000 >= deadline) throw error;
      await sleep(wait);
    }
  }
}
