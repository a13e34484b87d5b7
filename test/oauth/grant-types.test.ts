/**
 * The grant types are declared once (oauth/grant-types.ts) and everything else follows the table:
 * every grant the token endpoint serves has a declaration — the usage count its tokens add and
 * whether a registration may name it — and every declaration is served; a registration (RFC 7591)
 * is accepted or refused for each grant type as the table says. SQLite only: the database plays no
 * part in which grant types exist.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createAccount } from '../../src/domain/users.js';
import { GRANT_TYPE_NAMES, GRANT_TYPES, grantTypeRule } from '../../src/oauth/grant-types.js';
import { SUPPORTED_GRANT_TYPES } from '../../src/oauth/token.js';
import type { TestApp } from '../support/app.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { createOAuthTestApp } from './flow.js';

cheapPasswordHashing();

const OPERATOR = 'operator@example.com';
/** The usage counts an app's page shows for token answers (http/usage.ts). */
const USAGE_NAMES = ['tokens.issued', 'tokens.refreshed'];

it('declares a usage count and a registration rule for every grant the token endpoint serves, and serves every grant declared', () => {
  assert.ok(SUPPORTED_GRANT_TYPES.length >= 3);
  for (const name of SUPPORTED_GRANT_TYPES) {
    const rule = grantTypeRule(name);
    assert.ok(rule, `${name} is served but not declared in oauth/grant-types.ts`);
    assert.ok(USAGE_NAMES.includes(rule.usage), `${name}: usage ${rule.usage}`);
    assert.equal(typeof rule.registrable, 'boolean', `${name}: registrable`);
  }
  assert.deepEqual([...SUPPORTED_GRANT_TYPES].sort(), [...GRANT_TYPE_NAMES].sort(), 'every declared grant type is served');
  assert.equal(grantTypeRule('client_credentials'), undefined);
});

let t: TestApp;
before(async () => {
  t = await createOAuthTestApp('sqlite', { REGISTRATION: 'open', REGISTRATION_OWNER: OPERATOR });
  await createAccount(t.database.stores.users, t.clock, { email: OPERATOR, password: 'correct horse battery', displayName: 'Operator' });
});
after(() => t.close());

it('registers a client naming a grant type exactly when the declaration says it may', async () => {
  for (const rule of GRANT_TYPES) {
    const grantTypes = [...new Set(['authorization_code', rule.name])];
    const response = await t.app.inject({ method: 'POST', url: '/oauth2/register', payload: { redirect_uris: ['https://o.example/cb'], client_name: 'Declared', grant_types: grantTypes } });
    if (rule.registrable) {
      assert.equal(response.statusCode, 201, `${rule.name}: ${response.body}`);
      assert.deepEqual(response.json().grant_types, grantTypes);
    } else {
      assert.equal(response.statusCode, 400, rule.name);
      assert.equal(response.json().error, 'invalid_client_metadata');
    }
  }
});
