/**
 * RFC 7662 token introspection for authenticated clients. A client sees `active: true` only for
 * its own live tokens; everything else is `{"active": false}` (§2.2), revealing nothing.
 */
import type { AppContext } from '../context.js';
import { invalidRequest } from '../errors.js';
import { tokenKey } from '../security/secrets.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { FormParameters } from './grant.js';

export type Introspection =
  | { active: false }
  | { active: true; scope: string; client_id: string; sub: string; exp: number; iat: number; token_type: string; cnf?: { jkt: string } };

export async function introspectToken(
  ctx: AppContext,
  client: AuthenticatedClient,
  body: FormParameters,
): Promise<Introspection> {
  const token = body.token;
  if (!token) throw invalidRequest('token is required');
  const { tokens } = ctx.stores;
  const now = ctx.clock();
  const hash = tokenKey(token);
  // A token of the client proves it, whether or not the token is still active.
  // RFC 9449 §6.2: a bound token's key thumbprint as `cnf.jkt`.
  const answer = (row: { app_id: string; scope: string; user_id: string; expires_at: number; created_at: number; jkt: string | null }, tokenType: string, live: boolean): Introspection =>
    client.owns(row) && live && row.expires_at > now
      ? {
          active: true, scope: row.scope, client_id: client.app.clientId, sub: row.user_id, exp: row.expires_at, iat: row.created_at, token_type: tokenType,
          ...(row.jkt !== null && { cnf: { jkt: row.jkt } }),
        }
      : { active: false };

  const access = await tokens.findAccess(hash);
  if (access) return answer(access, access.jkt === null ? 'Bearer' : 'DPoP', true);
  const refresh = await tokens.findRefresh(hash);
  if (refresh) return answer(refresh, 'refresh_token', refresh.rotated_at === null);
  return { active: false };
}
