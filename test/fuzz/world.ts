/**
 * The real credentials the fuzzers mix into their requests, so that requests get past sign-in,
 * CSRF checks, client authentication and bearer checks and reach the code behind them: a person
 * with a password and a signed-in session (cookie + its CSRF token), a pre-sign-in CSRF pair, a
 * confidential app (client id + secret) they own and granted every scope to, with an access
 * token, a refresh token and an unused PKCE code, and a public app granted only read_profile, with
 * an access token of that one scope; a webhook endpoint of the confidential app with a delivery in
 * its log, and a test person of the person's own.
 *
 * Generated requests name them by marker (`real('accessToken')` = "⟦accessToken⟧"), filled in when
 * a request is sent: requests that sign out, rotate, revoke or delete change what is current, and a
 * failing case prints the marker, not a credential that no longer exists. Credentials are written
 * with the store functions the server itself uses; `renew()` replaces every one of them.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { registerApp } from '../../src/domain/apps.js';
import { TEST_PERSON_PASSWORD_HASH } from '../../src/domain/test-people.js';
import { createAccount } from '../../src/domain/users.js';
import { mintTokenPair } from '../../src/oauth/issue-tokens.js';
import { ALL_SCOPES, formatScopes } from '../../src/domain/scopes.js';
import { hashCredential, newCredential } from '../../src/security/secrets.js';
import { insertAuthorizationCode } from '../../src/store/codes.js';
import { insertTokenPair } from '../../src/store/tokens.js';
import type { User } from '../../src/store/users.js';
import { insertGrant } from '../support/tokens.js';
import { sessionCsrfToken } from '../../src/web/csrf.js';
import type { Session } from '../../src/web/session.js';
import type { TestApp } from '../support/app.js';

export const REAL_NAMES = [
  'email', 'password', 'session', 'csrf', 'preCsrf', 'clientId', 'clientSecret', 'appId', 'publicClientId',
  'accessToken', 'refreshToken', 'narrowToken', 'code', 'codeVerifier', 'codeChallenge', 'endpointId', 'deliveryId', 'testPersonId',
] as const;
export type RealName = (typeof REAL_NAMES)[number];

export const REDIRECT_URI = 'https://client.example/callback';
export const PUBLIC_REDIRECT_URI = 'http://127.0.0.1:9/cb';

export const real = (name: RealName): string => `⟦${name}⟧`;
const MARKER = /⟦(\w+)⟧/g;

export const hasMarker = (text: string): boolean => text.includes('⟦');

export class FuzzWorld {
  private values!: Record<RealName, string>;

  private constructor(private readonly t: TestApp, private readonly user: User, private readonly password: string, private readonly testPersonId: string) {}

  static async create(t: TestApp): Promise<FuzzWorld> {
    const password = 'fuzzing correct horse';
    const user = await createAccount(t.database.stores.users, t.clock, { email: `fuzz-${randomBytes(4).toString('hex')}@example.com`, password, displayName: 'Fuzz Walker' });
    // A test person stays with the account: no case can delete one.
    const testPersonId = randomUUID();
    await t.database.stores.testPeople.addUpTo(user.id, [{
      user: { id: testPersonId, email: `fuzz-${testPersonId}@test-people.invalid`, password_hash: TEST_PERSON_PASSWORD_HASH, display_name: 'Fuzz Tester', stride_length_cm: null, created_at: t.clock(), updated_at: t.clock(), test_person_owner_id: user.id },
      life: 'runner', seed: 1, firstDate: '2026-01-01', syncedUntil: t.clock(),
    }], 1);
    const world = new FuzzWorld(t, user, password, testPersonId);
    await world.renew();
    return world;
  }

  /** Replaces markers by the current credentials. */
  fill(text: string): string {
    return hasMarker(text) ? text.replace(MARKER, (marker, name: string) => (this.values as Record<string, string>)[name] ?? marker) : text;
  }

  get(name: RealName): string {
    return this.values[name];
  }

  /** Fresh credentials: ends the old session and deletes the person's apps (their grants, codes and tokens go with them). */
  async renew(): Promise<void> {
    const db = this.t.database.db.kysely;
    const now = this.t.clock();
    if (this.values) await db.deleteFrom('sessions').where('user_id', '=', this.user.id).execute();
    await db.deleteFrom('apps').where('owner_id', '=', this.user.id).execute();

    const session = newCredential('session');
    const csrfSecret = randomBytes(32).toString('base64url');
    await this.t.database.stores.sessions.insert({ id_hash: hashCredential(session), user_id: this.user.id, csrf_secret: csrfSecret, created_at: now, expires_at: now + 3600 });

    const confidential = await registerApp(this.t.database.stores.apps, this.t.clock, this.user.id, {
      name: 'Fuzz Target', description: '', websiteUrl: '', redirectUris: [REDIRECT_URI], scopes: [...ALL_SCOPES], isPublic: false,
    });
    const publicApp = await registerApp(this.t.database.stores.apps, this.t.clock, this.user.id, {
      name: 'Fuzz Pocket', description: '', websiteUrl: '', redirectUris: [PUBLIC_REDIRECT_URI], scopes: [...ALL_SCOPES], isPublic: true,
      // The device grant too, so that device requests get past the grant type check.
      grantTypes: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    });
    const scope = formatScopes([...ALL_SCOPES]);
    const grantId = await insertGrant(db, { userId: this.user.id, appId: confidential.app.id, scope }, now);
    const pair = mintTokenPair(this.t.config, now, { familyId: randomUUID(), grantId, appId: confidential.app.id, userId: this.user.id, scope, requestedScope: null, accessJkt: null, refreshJkt: null });
    await insertTokenPair(db, pair.access, pair.refresh);
    const narrowGrantId = await insertGrant(db, { userId: this.user.id, appId: publicApp.app.id, scope: 'read_profile' }, now);
    const narrow = mintTokenPair(this.t.config, now, { familyId: randomUUID(), grantId: narrowGrantId, appId: publicApp.app.id, userId: this.user.id, scope: 'read_profile', requestedScope: null, accessJkt: null, refreshJkt: null });
    await insertTokenPair(db, narrow.access, narrow.refresh);

    const endpoint = (await this.t.database.stores.webhooks.add(confidential.app.id, 'https://hooks.example.com/fuzz', ['steps.updated'], now, { atMost: 1 }))!;
    await this.t.database.stores.webhooks.sendTest(endpoint.id, now);
    const [delivery] = await this.t.database.stores.webhooks.deliveries(endpoint.id, 1);

    const codeVerifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(codeVerifier).digest('base64url');
    const code = newCredential('authorizationCode');
    await insertAuthorizationCode(db, {
      code_hash: hashCredential(code), app_id: confidential.app.id, user_id: this.user.id, grant_id: grantId, redirect_uri: REDIRECT_URI,
      scope, code_challenge: codeChallenge, code_challenge_method: 'S256', expires_at: now + 600, consumed_at: null, created_at: now, requested_scope: null,
    });

    this.values = {
      email: this.user.email,
      password: this.password,
      session,
      csrf: sessionCsrfToken({ csrfSecret } as Session),
      preCsrf: randomBytes(32).toString('base64url'),
      clientId: confidential.app.clientId,
      clientSecret: confidential.clientSecret!,
      appId: confidential.app.id,
      publicClientId: publicApp.app.clientId,
      accessToken: pair.response.access_token,
      refreshToken: pair.response.refresh_token,
      narrowToken: narrow.response.access_token,
      code,
      codeVerifier,
      codeChallenge,
      endpointId: endpoint.id,
      deliveryId: delivery!.id,
      testPersonId: this.testPersonId,
    };
  }
}
