/**
 * The clients of the crash test: each loops on one kind of write against a real `stride serve`
 * until the server dies under it, and logs what it was told (answered) apart from what it was
 * still waiting for when the connection broke (in flight). The test then checks the restarted
 * server against these logs.
 */
import { authorizeUrl, Browser, encodeForm, formFields, checkboxScopes, type Tokens } from '../oauth/flow.js';

export interface Client {
  base: string;
  clientId: string;
  secret: string;
  redirectUri: string;
}

export interface Answer {
  status: number;
  text: string;
  json(): any;
}

/** The connection broke before a whole answer arrived: the server died under the request. */
export class Unanswered extends Error {
  readonly at = Date.now();
}

/** One request; a broken connection (or a body cut short) throws Unanswered. */
export async function send(base: string, method: 'GET' | 'POST', path: string, options: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = encodeForm(options.form);
  } else if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  try {
    const response = await fetch(new URL(path, base), { method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(20_000) });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) };
  } catch (error) {
    throw new Unanswered(String(error));
  }
}

export function tokenRequest(client: Client, form: Record<string, string>): Promise<Answer> {
  return send(client.base, 'POST', '/oauth2/token', { form: { ...form, client_id: client.clientId, client_secret: client.secret } });
}

export const refreshWith = (client: Client, refreshToken: string) => tokenRequest(client, { grant_type: 'refresh_token', refresh_token: refreshToken });

export const exchange = (client: Client, code: string) => tokenRequest(client, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri });

export const profileStatus = async (base: string, accessToken: string) =>
  (await send(base, 'GET', '/v1/users/me', { headers: { authorization: `Bearer ${accessToken}` } })).status;

/** Browser requests (cookies kept) whose broken connections throw Unanswered. */
async function browse<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new Unanswered(String(error));
  }
}

/** What every loop records besides its own log: answers that should not have happened during the load. */
export interface LoadLog {
  unexpected: string[];
  /** When each loop stopped on a broken connection. */
  brokenAt: number[];
}

/** Runs `loop` until a request of it is left unanswered (the kill); other errors are unexpected. */
export async function untilKilled(log: LoadLog, name: string, loop: () => Promise<void>): Promise<void> {
  try {
    for (;;) await loop();
  } catch (error) {
    if (error instanceof Unanswered) log.brokenAt.push(error.at);
    else log.unexpected.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function expectStatus(answer: Answer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
}

/**
 * Consent through the pages (the consent page is shown: `prompt=consent`), for the signed-in
 * `browser`. `onDecisionSent` runs just before the consent form is posted (a write may happen from
 * then on). Returns the code of the answered redirect.
 */
export async function consent(browser: Browser, client: Client, state: string, onDecisionSent: () => void = () => undefined): Promise<string> {
  const page = await browse(() => browser.get(authorizeUrl({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, state, prompt: 'consent' })));
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}`);
  const form = { ...formFields(page.body, '/oauth2/authorize'), granted_scope: checkboxScopes(page.body), decision: 'allow' };
  onDecisionSent();
  const decision = await browse(() => browser.post('/oauth2/authorize', form));
  if (decision.status !== 303) throw new Error(`consent answered ${decision.status}: ${decision.body.slice(0, 200)}`);
  const code = decision.location().searchParams.get('code');
  if (!code) throw new Error(`consent redirected without a code: ${decision.location()}`);
  return code;
}

/** The user removes the app on the account page. */
export async function revokeOnAccountPage(browser: Browser, appId: string): Promise<void> {
  const action = `/account/connected-apps/${appId}/revoke`;
  const page = await browse(() => browser.get('/account'));
  if (page.status !== 200) throw new Error(`account page answered ${page.status}`);
  const answer = await browse(() => browser.post(action, formFields(page.body, action)));
  if (answer.status !== 303) throw new Error(`account revoke answered ${answer.status}`);
}

/** A code for the signed-in `browser`: at once when consent is remembered, else through the consent page. */
export async function authorizationCode(browser: Browser, client: Client): Promise<string> {
  const url = authorizeUrl({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, state: 's' });
  const page = await browse(() => browser.get(url));
  if (page.status === 200) return consent(browser, client, 's');
  const code = page.status === 302 ? page.location().searchParams.get('code') : null;
  if (!code) throw new Error(`authorization answered ${page.status}: ${String(page.headers.location ?? page.body.slice(0, 200))}`);
  return code;
}

export async function exchangeForTokens(client: Client, code: string): Promise<Tokens> {
  const answer = await exchange(client, code);
  expectStatus(answer, 200, 'code exchange');
  return answer.json() as Tokens;
}

/** A minute's value in upload batch `batch`: every batch writes different values, so a row names its batch. */
export function sampleValue(batch: number, minute: number): number {
  return (batch * 7919 + minute * 31) % 1001;
}

export const MINUTES_PER_BATCH = 1440;
