/**
 * Stride listening on a free 127.0.0.1 port, as third-party client libraries reach it, its RFC 8414
 * metadata already discovered with oauth4webapi.
 */
import * as oauth from 'oauth4webapi';
import type { Dialect } from '../../src/db/database.js';
import type { TestApp } from '../support/app.js';
import { freePort } from '../support/cli.js';
import { createOAuthTestApp } from './flow.js';

/** The libraries refuse http:// unless told: these servers are on loopback. */
export const insecure = { [oauth.allowInsecureRequests]: true };

export interface ListeningStride {
  t: TestApp;
  issuer: URL;
  as: oauth.AuthorizationServer;
}

export async function listeningStride(dialect: Dialect, env: Record<string, string> = {}): Promise<ListeningStride> {
  const port = await freePort();
  const issuer = new URL(`http://127.0.0.1:${port}`);
  const t = await createOAuthTestApp(dialect, { PUBLIC_URL: issuer.origin, ...env });
  await t.app.listen({ port, host: '127.0.0.1' });
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  return { t, issuer, as };
}

/** An authorization request with PKCE (S256) and a state, as the libraries make it; its verifier and state kept. */
export async function pkceAuthorizationUrl(as: oauth.AuthorizationServer, clientId: string, redirectUri: string, scope: string) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url, verifier, state };
}
