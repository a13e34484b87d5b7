/**
 * Mixed load against a running Stride for fault tests: bearer GETs, refresh-token rotations and a
 * signed-in page, each a loop of real HTTP requests, every answer recorded (status, error body,
 * Retry-After, time taken). A request that takes longer than the load's timeout is recorded as a
 * hang (status 0). The data the load needs is written through the store beforehand.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import { registerApp } from '../../src/domain/apps.js';
import { newCredential, newTokenPair, hashCredential, tokenKey } from '../../src/security/secrets.js';
import { insertTokenPair } from '../../src/store/tokens.js';
import { createStores } from '../../src/store/stores.js';
import { SESSION_COOKIE } from '../../src/web/session.js';

const SCOPES = 'read_profile read_activity write_activity';

export interface Seeded {
  clientId: string;
  clientSecret: string;
  accessToken: string;
  /** The live refresh token of each chain. */
  refreshTokens: string[];
  /** `Cookie` header value of a signed-in browser. */
  sessionCookie: string;
}

/** A user with a session, a confidential app, a grant, an access token and `chains` refresh tokens. */
export async function seedClient(db: Db, chains = 3): Promise<Seeded> {
  const kysely = db.kysely;
  const stores = createStores(db);
  const now = Math.floor(Date.now() / 1000);
  const clock = () => now;
  const userId = randomUUID();
  await stores.users.insert({
    id: userId,
    email: `fault-${userId.slice(0, 8)}@example.test`,
    password_hash: '$argon2id$v=19$m=19456,t=2,p=1$unused$unused',
    display_name: 'Fault Tester',
    timezone: 'UTC',
    daily_step_goal: 10000,
    stride_length_cm: null,
    created_at: now,
    updated_at: now,
  });
  const { app, clientSecret } = await registerApp(stores.apps, clock, userId, {
    name: 'Fault Load',
    redirectUris: ['https://app.example.test/callback'],
    scopes: ['read_profile', 'read_activity', 'write_activity'],
    isPublic: false,
  });
  const grantId = randomUUID();
  await kysely
    .insertInto('grants')
    .values({ id: grantId, user_id: userId, app_id: app.id, scope: SCOPES, created_at: now, updated_at: now, last_used_at: null })
    .execute();
  let accessToken = '';
  const refreshTokens: string[] = [];
  for (let i = 0; i < chains; i++) {
    const pair = newTokenPair();
    const family = { family_id: randomUUID(), grant_id: grantId, app_id: app.id, user_id: userId, scope: SCOPES, created_at: now, jkt: null };
    await insertTokenPair(
      kysely,
      { token_key: tokenKey(pair.accessToken), ...family, expires_at: now + 3600 },
      { token_key: tokenKey(pair.refreshToken), ...family, expires_at: now + 86_400, requested_scope: null },
    );
    accessToken = pair.accessToken;
    refreshTokens.push(pair.refreshToken);
  }
  const session = newCredential('session');
  await stores.sessions.insert({ id_hash: hashCredential(session), user_id: userId, csrf_secret: 'x'.repeat(43), created_at: now, expires_at: now + 3600 });
  return { clientId: app.clientId, clientSecret: clientSecret!, accessToken, refreshTokens, sessionCookie: `${SESSION_COOKIE}=${session}` };
}

export type RequestKind = 'bearer' | 'refresh' | 'page';

export interface Answer {
  kind: RequestKind;
  /** 0: no answer within the load's timeout, or the connection failed. */
  status: number;
  contentType: string;
  retryAfter: string | null;
  body: string;
  ms: number;
  /** Date.now() when the answer came. */
  at: number;
}

export interface Load {
  answers: Answer[];
  /** Ends every loop after its request in flight; resolves when all have ended. */
  stop(): Promise<void>;
}

export function startLoad(baseUrl: string, seeded: Seeded, { timeoutMs = 10_000, pauseMs = 5, bearerLoops = 3 } = {}): Load {
  const answers: Answer[] = [];
  let stopped = false;

  const send = async (kind: RequestKind, path: string, init: RequestInit): Promise<Answer> => {
    const started = Date.now();
    let answer: Answer;
    try {
      const response = await fetch(`${baseUrl}${path}`, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
      answer = {
        kind,
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        retryAfter: response.headers.get('retry-after'),
        body: await response.text(),
        ms: Date.now() - started,
        at: Date.now(),
      };
    } catch (error) {
      answer = { kind, status: 0, contentType: '', retryAfter: null, body: String(error), ms: Date.now() - started, at: Date.now() };
    }
    answers.push(answer);
    return answer;
  };

  const loop = async (step: () => Promise<unknown>) => {
    while (!stopped) {
      await step();
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };

  const bearer = () => send('bearer', '/v1/users/me', { headers: { authorization: `Bearer ${seeded.accessToken}` } });
  const page = () => send('page', '/account', { headers: { cookie: seeded.sessionCookie } });
  const refreshChain = (chain: number) => async () => {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: seeded.refreshTokens[chain]!,
      client_id: seeded.clientId,
      client_secret: seeded.clientSecret,
    });
    const answer = await send('refresh', '/oauth2/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    // A client keeps its refresh token until it gets a new one.
    if (answer.status === 200) seeded.refreshTokens[chain] = (JSON.parse(answer.body) as { refresh_token: string }).refresh_token;
  };

  const loops = [
    ...Array.from({ length: bearerLoops }, () => loop(bearer)),
    ...seeded.refreshTokens.map((_, chain) => loop(refreshChain(chain))),
    loop(page),
  ];
  return {
    answers,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** A 503 as a client must see it while the database is away: the one error shape (or a page), Retry-After, no internals. */
export function assertTemporarilyUnavailable(answer: Answer): void {
  const where = `${answer.kind} answered ${answer.status} after ${answer.ms} ms: ${answer.body.slice(0, 300)}`;
  assert.equal(answer.status, 503, where);
  assert.match(answer.retryAfter ?? '', /^[1-9][0-9]*$/, `Retry-After missing: ${where}`);
  if (answer.kind === 'page') {
    assert.match(answer.contentType, /^text\/html/, where);
    assert.match(answer.body, /temporarily unavailable/i, where);
  } else {
    assert.match(answer.contentType, /^application\/json/, where);
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], where);
    assert.equal(body.error, 'temporarily_unavailable', where);
    assert.equal(typeof body.error_description, 'string', where);
  }
  assert.doesNotMatch(answer.body, /ECONN|terminat|57P0|SQLITE|select |insert |update |postgres|\.js:\d/i, `internals leaked: ${where}`);
}

/** Every answer was a success or a proper 503; none hung, none was a 500. */
export function assertSuccessOr503(answers: readonly Answer[]): void {
  for (const answer of answers) {
    if (answer.status === 200) continue;
    assertTemporarilyUnavailable(answer);
  }
}

export function countByStatus(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { kind, status } of answers) counts[`${kind} ${status}`] = (counts[`${kind} ${status}`] ?? 0) + 1;
  return counts;
}
