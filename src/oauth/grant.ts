/**
 * The one shape of a grant type at the token endpoint (RFC 6749 §4 and §6; the handler model of
 * fosite's token endpoint). A grant declares its `grant_type` and which kinds of client may use
 * it; the endpoint (token.ts) authenticates the client once, before any grant runs, refuses a
 * client of a kind the grant does not take, and only then calls the grant's handler with the
 * authenticated client. A handler never reads client credentials, and acts on a code or token only
 * after `client.owns(it)` said yes — which is also how a public client proves itself.
 */
import type { AppContext } from '../context.js';
import type { AuthenticatedClient, ClientKind } from './client-auth.js';
import type { GrantTypeName } from './grant-types.js';
import type { TokenResponse } from './issue-tokens.js';
import type { VerifiedProof } from './dpop.js';

/** The form parameters of a client endpoint request, each one string (token.ts, formParameters). */
export type FormParameters = Readonly<Record<string, string | undefined>>;

export interface TokenRequest {
  /** Authenticated, and of a kind the grant takes. */
  client: AuthenticatedClient;
  body: FormParameters;
  /** The request's verified DPoP proof (RFC 9449 §5), or undefined when it carried none. */
  dpop: VerifiedProof | undefined;
}

/**
 * The thumbprints a new pair is bound to (RFC 9449 §5): the access token to the proof's key; the
 * refresh token too when the client is public, for a confidential client's refresh token is bound
 * to its authentication already.
 */
export function bindings(client: AuthenticatedClient, dpop: VerifiedProof | undefined): { accessJkt: string | null; refreshJkt: string | null } {
  const jkt = dpop?.jkt ?? null;
  return { accessJkt: jkt, refreshJkt: client.kind === 'public' ? jkt : null };
}

export interface Grant {
  /** The `grant_type` it answers. */
  readonly grantType: GrantTypeName;
  /**
   * The kinds of client that may use it; any other gets `unauthorized_client` (RFC 6749 §5.2)
   * before the handler runs. A grant that takes public clients must not rely on the client's
   * identity beyond what its code or token proves.
   */
  readonly clients: readonly ClientKind[];
  /** Runs only for an authenticated client of a kind in `clients`. */
  handle(ctx: AppContext, request: TokenRequest): Promise<TokenResponse>;
}

/** Both kinds of client (RFC 6749 §2.1). */
export const ANY_CLIENT: readonly ClientKind[] = ['confidential', 'public'];
