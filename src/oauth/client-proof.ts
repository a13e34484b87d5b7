/**
 * Which client a token, revocation or introspection request is counted for in the app's usage
 * (docs/web.md, "App usage"): the one that proved itself. A confidential client proves itself by
 * authenticating with its secret. A public client has no secret (RFC 6749 §2.1), so anyone may name
 * its id: it proves itself only by a code or token that was issued to it, and until then its
 * requests count for no app.
 */
import type { AuthenticatedClient } from './client-auth.js';

/** Told the client once the request has proven it (at most a few times per request). */
export type ClientProven = (client: AuthenticatedClient) => void;

/** After client authentication: proof enough for a confidential client, none for a public one. */
export function authenticated(client: AuthenticatedClient, proven: ClientProven): AuthenticatedClient {
  if (!client.app.isPublic) proven(client);
  return client;
}

/** A code or token the request carried was found to belong to the client: proof for any client. */
export function carriesItsOwn(client: AuthenticatedClient, credential: { app_id: string } | undefined, proven: ClientProven): void {
  if (credential !== undefined && credential.app_id === client.app.id) proven(client);
}
