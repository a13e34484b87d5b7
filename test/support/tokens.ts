/**
 * Real access tokens for resource API tests: a user, an app, a grant and an access-token row made
 * through the store, checked by the real bearer hook.
 */
import { randomUUID } from 'node:crypto';
import { registerApp } from '../../src/domain/apps.js';
import { formatScopes } from '../../src/domain/scopes.js';
import { newTokenPair, tokenKey } from '../../src/security/secrets.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { TestApp } from './app.js';

export const ALL_RESOURCE_SCOPES = ['read_profile', 'write_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body'];

export interface TestUser {
  id: string;
  email: string;
}

export async function createUser(t: TestApp, fields: { timezone?: string; displayName?: string } = {}): Promise<TestUser> {
  const id = randomUUID();
  const email = `user-${id.slice(0, 8)}@example.test`;
  const now = t.clock();
  await t.database.stores.users.insert({
    id,
    email,
    // Never checked here: these users only authenticate with tokens.
    password_hash: '$argon2id$v=19$m=19456,t=2,p=1$unused$unused',
    display_name: fields.displayName ?? 'Test User',
    timezone: fields.timezone ?? 'UTC',
    daily_step_goal: 10000,
    stride_length_cm: null,
    created_at: now,
    updated_at: now,
  });
  return { id, email };
}

/** A grant row written directly (tests that need tokens without the pages); returns its id. */
export async function insertGrant(db: Kysely<Database>, grant: { userId: string; appId: string; scope: string }, now: number): Promise<string> {
  const id = randomUUID();
  await db.insertInto('grants').values({ id, user_id: grant.userId, app_id: grant.appId, scope: grant.scope, created_at: now, updated_at: now, last_used_at: null }).execute();
  return id;
}

export interface IssuedToken {
  token: string;
  appId: string;
  grantId: string;
}

/** An access token of a fresh app for `user`, with `scopes`, valid for `ttl` seconds. */
export async function issueAccessToken(t: TestApp, user: TestUser, scopes: string[], ttl = 3600): Promise<IssuedToken> {
  const db = t.database.db.kysely;
  const now = t.clock();
  const { app } = await registerApp(t.database.stores.apps, t.clock, user.id, {
    name: 'Test App',
    redirectUris: ['https://app.example.test/callback'],
    scopes: ALL_RESOURCE_SCOPES,
    isPublic: false,
  });
  const scope = formatScopes(scopes);
  const grantId = randomUUID();
  await db
    .insertInto('grants')
    .values({ id: grantId, user_id: user.id, app_id: app.id, scope, created_at: now, updated_at: now, last_used_at: null })
    .execute();
  const token = newTokenPair().accessToken;
  await db
    .insertInto('access_tokens')
    .values({
      token_key: tokenKey(token),
      family_id: randomUUID(),
      grant_id: grantId,
      app_id: app.id,
      user_id: user.id,
      scope,
      expires_at: now + ttl,
      created_at: now,
    })
    .execute();
  return { token, appId: app.id, grantId };
}

/** A user and a token carrying every resource scope. */
export async function userWithToken(
  t: TestApp,
  fields: { timezone?: string; displayName?: string } = {},
  scopes = ALL_RESOURCE_SCOPES,
): Promise<{ user: TestUser; token: string }> {
  const user = await createUser(t, fields);
  const { token } = await issueAccessToken(t, user, scopes);
  return { user, token };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
