/**
 * A real HTTP subscriber for the Fitbit-compatible subscription tests, as an app written for Fitbit
 * runs one: it answers Fitbit's verification (`GET ?verify=`) — correctly, or wrongly on purpose —
 * records every notification, and checks `X-Fitbit-Signature` as Fitbit's documentation tells
 * receivers to: base64 of HMAC-SHA1(body, key), the key being the client secret and "&". Also the
 * app's side of the tests: an app with its client secret, and tokens of people for it.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { registerApp } from '../../src/domain/apps.js';
import { formatScopes } from '../../src/domain/scopes.js';
import { newTokenPair, tokenKey } from '../../src/security/secrets.js';
import type { App } from '../../src/store/apps.js';
import type { TestApp } from './app.js';
import { ALL_RESOURCE_SCOPES, type TestUser } from './tokens.js';

export interface Notification {
  headers: Record<string, string>;
  body: string;
  entries: Array<{ collectionType: string; date: string; ownerId: string; ownerType: string; subscriptionId: string }>;
}

/**
 * How it answers `?verify=`: `correct` (204 to its code, 404 to any other), `yes-to-anything`
 * (204 to any code), `no-to-its-code` (404 to any code).
 */
export type VerificationAnswers = 'correct' | 'yes-to-anything' | 'no-to-its-code';

export interface FitbitSubscriber {
  url: string;
  /** The codes of the `?verify=` requests, in order. */
  verifications: string[];
  notifications: Notification[];
  answers: VerificationAnswers;
  /** Whether `notification`'s signature is the one `clientSecret` makes, as a Fitbit receiver checks it. */
  signedWith(notification: Notification, clientSecret: string): boolean;
  /** Resolves once `count` notifications arrived. */
  waitFor(count?: number, timeoutMs?: number): Promise<Notification[]>;
  close(): Promise<void>;
}

export async function startFitbitSubscriber(code: string, answers: VerificationAnswers = 'correct'): Promise<FitbitSubscriber> {
  const verifications: string[] = [];
  const notifications: Notification[] = [];
  const state = { answers };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://subscriber.test');
    if (request.method === 'GET') {
      const given = url.searchParams.get('verify');
      if (given === null) return response.writeHead(400).end();
      verifications.push(given);
      const yes = state.answers === 'yes-to-anything' || (state.answers === 'correct' && given === code);
      return response.writeHead(yes ? 204 : 404).end();
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      notifications.push({ headers, body, entries: JSON.parse(body) });
      // Fitbit asks for 204 within 5 seconds.
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/fitbit/notifications`,
    verifications,
    notifications,
    get answers() {
      return state.answers;
    },
    set answers(value: VerificationAnswers) {
      state.answers = value;
    },
    signedWith(notification, clientSecret) {
      const expected = Buffer.from(createHmac('sha1', `${clientSecret}&`).update(notification.body).digest('base64'));
      const given = Buffer.from(notification.headers['x-fitbit-signature'] ?? '');
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    async waitFor(count = 1, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (notifications.length < count) {
        if (Date.now() > deadline) throw new Error(`waited for ${count} notifications, got ${notifications.length}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return notifications;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A confidential app of `owner` with every resource scope, and its client secret. */
export async function confidentialApp(t: TestApp, owner: TestUser): Promise<{ app: App; clientSecret: string }> {
  const { app, clientSecret } = await registerApp(t.database.stores.apps, t.clock, owner.id, {
    name: 'Fitbit Mover',
    redirectUris: ['https://mover.example.test/callback'],
    scopes: ALL_RESOURCE_SCOPES,
    isPublic: false,
  });
  return { app, clientSecret: clientSecret! };
}

/** An access token of `app` for `user` with `scopes`, under a grant of those scopes. */
export async function tokenOf(t: TestApp, app: App, user: TestUser, scopes: readonly string[]): Promise<string> {
  const db = t.database.db.kysely;
  const now = t.clock();
  const scope = formatScopes([...scopes]);
  const grantId = randomUUID();
  await db.insertInto('grants').values({ id: grantId, user_id: user.id, app_id: app.id, scope, created_at: now, updated_at: now, last_used_at: null }).execute();
  const token = newTokenPair().accessToken;
  await db
    .insertInto('access_tokens')
    .values({ token_key: tokenKey(token), family_id: randomUUID(), grant_id: grantId, app_id: app.id, user_id: user.id, scope, expires_at: now + 3600, created_at: now })
    .execute();
  return token;
}
