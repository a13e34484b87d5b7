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
