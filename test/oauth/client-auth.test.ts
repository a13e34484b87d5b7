/**
 * The authenticated client (src/oauth/client-auth.ts): its kind, and when a request has proven it
 * is that client — by its secret (confidential), or only by a code or token issued to it (public).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AuthenticatedClient, authenticateClient } from '../../src/oauth/client-auth.js';
import type { App } from '../../src/store/apps.js';
import { createTestDatabase } from '../support/databases.js';

const app = (isPublic: boolean): App => ({
  id: 'app-1', clientId: 'sc_one', clientSecretHash: isPublic ? null : 'hash', ownerId: 'owner', name: 'One', description: '',
  websiteUrl: '', redirectUris: [], scopes: [], isPublic, grantTypes: ['authorization_code', 'refresh_token'], requireDpop: false, requirePar: false, registrationTokenHash: null, registrationMetadata: null, createdAt: 0, updatedAt: 0,
});

it('a confidential client is proven by its secret alone', () => {
  const client = new AuthenticatedClient(app(false), 'client_secret_basic');
  assert.equal(client.kind, 'confidential');
  assert.equal(client.proven, true);
  assert.equal(client.owns({ app_id: 'app-2' }), false, "another client's row is not its own");
  assert.equal(client.proven, true);
});

it('a public client is proven only by a row issued to it', () => {
  const client = new AuthenticatedClient(app(true), 'none');
  assert.equal(client.kind, 'public');
  assert.equal(client.proven, false);
  assert.equal(client.owns(undefined), false);
  assert.equal(client.owns({ app_id: 'app-2' }), false);
  assert.equal(client.proven, false, "an unknown code or another client's proves nothing");
  assert.equal(client.owns({ app_id: 'app-1' }), true);
  assert.equal(client.proven, true);
});

it('lets no secret in for a confidential app whose secret hash is missing, whatever is sent', async () => {
  // No path makes such an app; were one written, the stand-in compared against must match nothing.
  const database = await createTestDatabase('sqlite');
  try {
    await database.stores.users.insert({ id: 'owner', email: 'owner@example.test', password_hash: 'x', display_name: 'Owner', timezone: 'UTC', daily_step_goal: 10000, stride_length_cm: null, created_at: 0, updated_at: 0 });
    await database.stores.apps.insert({ ...app(false), clientSecretHash: null });
    for (const secret of ['', 'stride-unknown-client', '-'.repeat(64), 'hash']) {
      await assert.rejects(authenticateClient(database.stores.apps, { client_id: 'sc_one', client_secret: secret }, undefined), { error: 'invalid_client' }, JSON.stringify(secret));
    }
  } finally {
    await database.drop();
  }
});
