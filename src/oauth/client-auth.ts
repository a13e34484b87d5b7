/**
 * Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3):
 * `client_secret_basic`, `client_secret_post`, and `none` for public clients (which must then use
 * PKCE). Failures are 401 `invalid_client`, with a Basic challenge when Basic was tried (§5.2).
 * The credentials are read by client-credentials.ts.
 */
import { constantTimeEqual, hashCredential, NO_CREDENTIAL_HASH } from '../security/secrets.js';
import type { App, AppStore } from '../store/apps.js';
import { invalidClient, readClientCredentials, type ClientAuthMethod } from './client-credentials.js';

export type { ClientAuthMethod } from './client-credentials.js';

/** RFC 6749 §2.1. */
export type ClientKind = 'confidential' | 'public';

/**
 * A client that passed authentication, and whether the request has proven it is that client —
 * whom its usage is counted for (docs/web.md, "App usage"). A confidential client proves itself by
 * its secret. A public client has no secret (RFC 6749 §2.1), so anyone may name its id: it proves
 * itself only by a code or token that was issued to it (`owns`), and until then the request counts
 * for no app.
 */
export class AuthenticatedClient {
  #proven: boolean;

  constructor(
    readonly app: App,
    readonly method: ClientAuthMethod,
  ) {
    this.#proven = !app.isPublic;
  }

  get kind(): ClientKind {
    return this.app.isPublic ? 'public' : 'confidential';
  }

  get proven(): boolean {
    return this.#proven;
  }

  /**
   * Whether `credential` (a code or token the request carried) was issued to this client. Every
   * grant, revocation and introspection asks before it acts on one; a yes proves the client.
   */
  owns<T extends { app_id: string }>(credential: T | undefined): credential is T {
    if (credential === undefined || credential.app_id !== this.app.id) return false;
    this.#proven = true;
    return true;
  }
}

/** RFC 6749 §2.3.1: the client of a token, revocation or introspection request, authenticated. */
export async function authenticateClient(
  apps: AppStore,
  body: Readonly<Record<string, string | undefined>>,
  authorization: string | undefined,
): Promise<AuthenticatedClient> {
  const credentials = readClientCredentials(body, authorization);
  const basicTried = credentials.method === 'client_secret_basic';
  const app = await apps.findByClientId(credentials.clientId);
  if (!app) {
    if (credentials.clientSecret !== undefined) constantTimeEqual(hashCredential(credentials.clientSecret), NO_CREDENTIAL_HASH);
    throw invalidClient('client authentication failed', basicTried);
  }
  if (app.isPublic) {
    // Public clients have no secret (token_endpoint_auth_method "none"); an empty Basic password
    // is how some libraries send "no secret".
    if (credentials.clientSecret !== undefined && credentials.clientSecret !== '') {
      throw invalidClient('client authentication failed', basicTried);
    }
    return new AuthenticatedClient(app, 'none');
  }
  if (credentials.clientSecret === undefined) {
    throw invalidClient('this client must authenticate with its client_secret', basicTried);
  }
  if (!constantTimeEqual(hashCredential(credentials.clientSecret), app.clientSecretHash ?? NO_CREDENTIAL_HASH)) {
    throw invalidClient('client authentication failed', basicTried);
  }
  return new AuthenticatedClient(app, credentials.method);
}
