/**
 * The app page's "Connecting a person" (docs/web.md): the authorization URL of this app, filled in
 * with its client id, a redirect URI (developer-redirect.ts) and its scopes, and the token endpoint its code goes
 * to (docs/oauth.md). A confidential app's URL can be tried at once by its developer; a public
 * app's needs a PKCE challenge of its own (RFC 7636 §4.3), so it shows where that goes instead.
 */
import type { Config } from '../../config.js';
import type { App } from '../../store/apps.js';
import { developerRedirectUri } from '../developer-redirect.js';

export function connectView(app: App, config: Config) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: developerRedirectUri(app, config.publicUrl),
    scope: app.scopes.join(' '),
    state: 'STATE',
  });
  if (app.isPublic) {
    query.set('code_challenge', 'CODE_CHALLENGE');
    query.set('code_challenge_method', 'S256');
  }
  const authorizeUrl = `${config.authUrl}/oauth2/authorize?${query}`;
  return {
    authorizeUrl,
    tryUrl: app.isPublic ? null : authorizeUrl.replace('state=STATE', 'state=tried-from-the-dashboard'),
    tokenUrl: `${config.publicUrl}/oauth2/token`,
  };
}
