/**
 * What a confidential client and its user's browser do: the authorization request, the login and
 * consent pages (whatever forms the server shows), and the code exchange with PKCE S256.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { Browser, connection, formBody, parseForms, send, type HtmlForm, type Page } from './browser.js';
import { signProof, type ProofKey } from './dpop-proofs.js';

export interface ServerEndpoints {
  authorize: string;
  token: string;
}

export interface ClientCredentials {
  clientId: string;
  /** '' for a public client (RFC 6749 §2.1): it sends only its client_id. */
  clientSecret: string;
  redirectUri: string;
}

export interface Credentials {
  /** Filled into the login form's username field (type email, or named login/email/username). */
  username: string;
  password: string;
}

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  scope?: string;
}

export interface AuthorizeOptions {
  scope: string;
  /** Extra authorization parameters, e.g. prompt=consent. */
  extra?: Record<string, string>;
  /** Binds the tokens to this key: the code exchange carries a DPoP proof of it (RFC 9449 §5). */
  dpopKey?: ProofKey;
}

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Fills the login form (password field present) or submits the consent form as it is. */
function formValues(form: HtmlForm, credentials: Credentials): Record<string, string> | null {
  const passwordField = Object.entries(form.types).find(([, type]) => type === 'password')?.[0];
  if (!passwordField) return {};
  const userField = Object.entries(form.types).find(
    ([name, type]) => type === 'email' || (type === 'text' && /^(login|email|username)$/i.test(name)),
  )?.[0];
  if (!userField) return null;
  return { [userField]: credentials.username, [passwordField]: credentials.password };
}

function describe(response: Page): string {
  return `${response.status} at ${new URL(response.url).pathname}: ${response.body.replace(/\s+/g, ' ').slice(0, 200)}`;
}

/**
 * Runs the browser through the authorization request until the server redirects to the client
 * with a code. Returns the code and the PKCE verifier to exchange it with.
 */
export async function authorizeInBrowser(
  browser: Browser,
  endpoints: ServerEndpoints,
  client: ClientCredentials,
  credentials: Credentials,
  options: AuthorizeOptions,
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(12).toString('base64url');
  const url = new URL(endpoints.authorize);
  const params = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: options.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...options.extra,
  };
  // Set on a copy, then written once: each set on url.searchParams serializes the whole query again.
  const query = new URLSearchParams(url.search);
  for (const [name, value] of Object.entries(params)) query.set(name, value);
  url.search = query.toString();

  let page = await browser.navigate(url);
  for (let step = 0; step < 6; step++) {
    if (page.leavingTo) {
      const back = new URL(page.leavingTo);
      const code = back.searchParams.get('code');
      if (!code) throw new Error(`authorization failed: ${back.searchParams.get('error')} ${back.searchParams.get('error_description') ?? ''}`);
      if (back.searchParams.get('state') !== state) throw new Error('authorization response with a wrong state');
      return { code, verifier };
    }
    if (page.status !== 200) throw new Error(`authorization: unexpected ${describe(page)}`);
    const form = parseForms(page.body).find((candidate) => !/logout|abort/.test(candidate.action));
    if (!form) throw new Error(`authorization: no form on ${describe(page)}`);
    const fill = formValues(form, credentials);
    if (fill === null) throw new Error(`authorization: a password form without a username field at ${page.url}`);
    page = await browser.submit(page, form, fill);
  }
  throw new Error('authorization: too many pages before the redirect to the client');
}

/**
 * RFC 6749 §4.1.3 with client_secret_post (or only client_id, for a public client), on the
 * connection to the token endpoint's origin; with `dpopKey`, a DPoP proof of it (RFC 9449 §5).
 */
export async function exchangeCode(
  dispatcher: Dispatcher,
  endpoints: ServerEndpoints,
  client: ClientCredentials,
  code: string,
  verifier: string,
  dpopKey?: ProofKey,
): Promise<TokenSet> {
  const token = new URL(endpoints.token);
  const proof = dpopKey && signProof(dpopKey, { htm: 'POST', htu: endpoints.token });
  const response = await send(dispatcher, token.pathname + token.search, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...(proof && { dpop: proof }) },
    body: formBody({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
      client_id: client.clientId,
      client_secret: client.clientSecret || undefined,
    }),
  });
  if (response.status !== 200) throw new Error(`code exchange: ${response.status} ${response.body.slice(0, 200)}`);
  return JSON.parse(response.body) as TokenSet;
}

/** The form body of one rotation (RFC 6749 §6) with client_secret_post, or a public client's id. */
export function refreshBody(client: ClientCredentials, refreshToken: string): string {
  return formBody({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.clientId,
    client_secret: client.clientSecret || undefined,
  });
}

/** Obtains `count` independent token sets with one browser session (consent given once). */
export async function obtainTokens(
  origin: string,
  endpoints: ServerEndpoints,
  client: ClientCredentials,
  credentials: Credentials,
  options: AuthorizeOptions,
  count: number,
): Promise<TokenSet[]> {
  const browser = new Browser(origin, connection(origin));
  try {
    const tokens: TokenSet[] = [];
    for (let i = 0; i < count; i++) {
      const { code, verifier } = await authorizeInBrowser(browser, endpoints, client, credentials, options);
      tokens.push(await exchangeCode(browser.client, endpoints, client, code, verifier, options.dpopKey));
    }
    return tokens;
  } finally {
    await browser.client.destroy();
  }
}
