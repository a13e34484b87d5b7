/**
 * Sending to a Fitbit-compatible subscriber (docs/migrating-from-fitbit.md, "Subscriptions"), as
 * Fitbit does, through the same checked connections, timeout and answer limit as every message
 * (send.ts):
 * - its verification: `GET <url>?verify=<its code>` must answer 204, and `GET <url>?verify=<a wrong
 *   code>` 404 — a subscriber that says yes to anything is not verified;
 * - a notification: a POST of Fitbit's JSON array, with `X-Fitbit-Signature`, base64 of
 *   HMAC-SHA1(body, client_secret + "&"), keyed with the app's client secret unsealed
 *   (domain/sealed-client-secrets.ts).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Agent } from 'undici';
import type { AppContext } from '../context.js';
import { unsealClientSecret } from '../domain/sealed-client-secrets.js';
import { constantTimeEqual, hashCredential } from '../security/secrets.js';
import type { ClaimedMessage } from '../store/webhooks.js';
import { request, type Answer } from './send.js';

/** Fitbit's signature of a notification's body. */
export function fitbitSignature(body: string, clientSecret: string): string {
  return createHmac('sha1', `${clientSecret}&`).update(body, 'utf8').digest('base64');
}

/** The subscriber's URL with `?verify=code`, its own query kept. */
function verifyUrl(url: string, code: string): string {
  const target = new URL(url);
  target.searchParams.set('verify', code);
  return target.toString();
}

/** A code that is not `code`, new each time, so that a subscriber cannot learn to expect it. */
function wrongCode(code: string): string {
  const made = randomBytes(16).toString('hex');
  return made === code ? `${made}0` : made;
}

/** Fitbit's two verification requests; `ok` when the subscriber told its code from a wrong one. */
export async function verifySubscriber(agent: Agent, url: string, code: string, allowPrivate: boolean): Promise<Answer> {
  const right = await request(agent, verifyUrl(url, code), { method: 'GET' }, allowPrivate);
  if (right.status !== 204) return { ...right, ok: false, error: right.status === null ? right.error : `the subscriber answered ${right.status} to ?verify= with its verification code; it must answer 204` };
  const wrong = await request(agent, verifyUrl(url, wrongCode(code)), { method: 'GET' }, allowPrivate);
  const latencyMs = right.latencyMs + wrong.latencyMs;
  if (wrong.status !== 404) return { ...wrong, ok: false, latencyMs, error: wrong.status === null ? wrong.error : `the subscriber answered ${wrong.status} to ?verify= with a wrong code; it must answer 404` };
  return { ok: true, status: 204, error: null, body: '', latencyMs };
}

/** Why the app's client secret cannot sign, or the secret. */
async function signingSecret(ctx: AppContext, message: ClaimedMessage): Promise<{ secret: string } | { problem: string }> {
  const secret = await unsealClientSecret(ctx.stores, ctx.clock, message.appId, message.secrets[0] ?? '');
  if (secret === null) return { problem: 'the client secret kept for signing cannot be read: enter it again for the Fitbit-compatible subscriber' };
  // A rotation reseals it; should one have been missed, a stale secret never signs.
  const app = await ctx.stores.apps.findById(message.appId);
  if (!app || !constantTimeEqual(hashCredential(secret), app.clientSecretHash ?? '')) {
    return { problem: 'the app\'s client secret changed since it was kept for signing: enter it again for the Fitbit-compatible subscriber' };
  }
  return { secret };
}

/** One attempt of a message to a subscriber: its verification, or a notification. */
export async function sendToSubscriber(ctx: AppContext, agent: Agent, message: ClaimedMessage): Promise<Answer> {
  const { allowPrivate } = ctx.config.webhooks;
  if (message.kind === 'verification') return verifySubscriber(agent, message.url, message.challenge ?? '', allowPrivate);
  const signing = await signingSecret(ctx, message);
  if ('problem' in signing) return { ok: false, status: null, error: signing.problem, body: '', latencyMs: 0 };
  const headers = { 'content-type': 'application/json', 'x-fitbit-signature': fitbitSignature(message.payload, signing.secret) };
  return request(agent, message.url, { method: 'POST', headers, body: message.payload }, allowPrivate);
}
