/**
 * "Connect a test person" on an app's page (docs/web.md, "Test people"): the app's real
 * authorization request — its first registered redirect URI, its scopes, a new state, and for a
 * public app a new PKCE pair (RFC 7636 §4.1–4.2) whose verifier is shown here, since the app did not
 * make it and needs it to exchange the code (docs/decisions/0024-test-people.md). On the consent page
 * the developer chooses which test person answers; the code then goes to the app's own callback.
 */
import { randomBytes } from 'node:crypto';
import { developerRedirectUri } from '../developer-redirect.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { s256 } from '../../oauth/pkce.js';
import { signedInLayout } from '../forms.js';
import { appPath, ownedBy } from '../owned-app.js';
import { sendPage } from '../views.js';
import { TEST_PEOPLE_PAGE } from './test-people.js';

export async function testPersonConnectPage(scope: FastifyInstance): Promise<void> {
  scope.get('/connect-test-person', showConnect);
}

async function showConnect(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  const { config, stores } = request.server.ctx;
  const state = randomBytes(16).toString('base64url');
  const verifier = app.isPublic ? randomBytes(32).toString('base64url') : null;
  const redirectUri = developerRedirectUri(app, config.publicUrl);
  const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri, scope: app.scopes.join(' '), state });
  if (verifier !== null) {
    query.set('code_challenge', s256(verifier));
    query.set('code_challenge_method', 'S256');
  }
  return sendPage(reply, './test-person-connect', {
    ...signedInLayout(session, `Connect a test person to ${app.name}`, 'dashboard'),
    app,
    path: appPath(app),
    testPeople: (await stores.testPeople.listOf(session.user.id)).length,
    testPeoplePath: TEST_PEOPLE_PAGE,
    authorizeUrl: `${config.authUrl}/oauth2/authorize?${query}`,
    redirectUri,
    state,
    verifier,
    tokenUrl: `${config.publicUrl}/oauth2/token`,
  });
}
