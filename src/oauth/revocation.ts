/**
 * RFC 7009 token revocation. The client must be authenticated and may only revoke its own tokens;
 * an unknown token (or one of another client) still gets 200 (§2.2), so the endpoint reveals
 * nothing. Revoking a refresh token ends its whole family: the access tokens issued with it too.
 */
import type { AppContext } from '../context.js';
import { invalidRequest } from '../errors.js';
import { tokenKey } from '../security/secrets.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { FormParameters } from './grant.js';

export async function revokeToken(ctx: AppContext, client: AuthenticatedClient, body: FormParameters): Promise<void> {
  const token = body.token;
  if (!token) throw invalidRequest('token is required');
  const { tokens } = ctx.stores;
  const hash = tokenKey(token);
  // The hint only orders the search (§2.1); unknown hints are ignored.
  const lookups = body.token_type_hint === 'refresh_token' ? (['refresh', 'access'] as const) : (['access', 'refresh'] as const);
  for (const kind of lookups) {
    if (kind === 'access') {
      const row = await tokens.findAccess(hash);
      if (row) {
        if (client.owns(row)) {
          await tokens.deleteAccess(hash);
          ctx.metrics.tokens.inc({ event: 'revoked' });
        }
        return;
      }
    } else {
      const row = await tokens.findRefresh(hash);
      if (row) {
        if (client.owns(row)) {
          await tokens.deleteFamily(row.grant_id, row.family_id);
          ctx.metrics.tokens.inc({ event: 'revoked' });
        }
        return;
      }
    }
  }
}
