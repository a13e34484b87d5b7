/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5): the device polls
 * with its device code until the person at `/device` allowed or denied the request. Most polls find
 * the request still pending: that poll is one conditional write of its time by the row's key
 * (the database checks state, expiry, client and pace); any other reads the row to say why not.
 */
import type { AppContext } from '../../context.js';
import { DEVICE_CODE_GRANT_TYPE } from '../grant-types.js';
import { ApiError, invalidRequest } from '../../errors.js';
import { hashCredential } from '../../security/secrets.js';
import { ANY_CLIENT, bindings, type Grant, type TokenRequest } from '../grant.js';
import { mintTokenPair, type TokenResponse } from '../issue-tokens.js';

const pendingError = () => new ApiError('authorization_pending', 'the user has not answered yet');

async function handle(ctx: AppContext, { client, body, dpop }: TokenRequest): Promise<TokenResponse> {
  const rawCode = body.device_code;
  if (!rawCode) throw invalidRequest('device_code is required');
  const hash = hashCredential(rawCode);
  const now = ctx.clock();
  if (await ctx.stores.deviceCodes.recordPendingPoll(hash, client.app.id, now)) {
    // The row matched the client's app: the device code was issued to it.
    client.owns({ app_id: client.app.id });
    throw pendingError();
  }
  const request = await ctx.stores.deviceCodes.findByDeviceCode(hash);
  // A device code of another client is unknown to this one.
  if (!client.owns(request)) throw new ApiError('invalid_grant', 'the device code is unknown');
  if (request.expires_at <= now) throw new ApiError('expired_token', 'the device code has expired; start a new device authorization request');
  switch (request.status) {
    case 'denied':
      throw new ApiError('access_denied', 'the user denied the request');
    case 'used':
      throw new ApiError('invalid_grant', 'the device code was already used');
    case 'pending':
      // RFC 8628 §3.5: a poll before the interval is up is slow_down, and the interval grows by 5 s.
      if (request.last_polled_at !== null && now - request.last_polled_at < request.poll_interval) {
        await ctx.stores.deviceCodes.recordTooFastPoll(hash, now);
        throw new ApiError('slow_down', `poll at most every ${request.poll_interval + 5} seconds`);
      }
      // What the conditional write would have done; the read's verdict stands on its own.
      await ctx.stores.deviceCodes.recordPoll(hash, now);
      throw pendingError();
    case 'approved':
      break;
  }
  const minted = mintTokenPair(ctx.config, now, {
    familyId: hash,
    grantId: request.grant_id!,
    appId: request.app_id,
    userId: request.user_id!,
    scope: request.scope,
    requestedScope: request.requested_scope,
    ...bindings(client, dpop),
  });
  if (!(await ctx.stores.deviceCodes.redeem(hash, now, minted.access, minted.refresh))) {
    // Another poll used it first, or the grant was revoked meanwhile.
    throw new ApiError('invalid_grant', 'the device code was already used');
  }
  ctx.metrics.tokens.inc({ event: 'issued' });
  return minted.response;
}

/** Public clients too: a device often cannot keep a secret (RFC 8628 §5.6). */
export const deviceCode: Grant = { grantType: DEVICE_CODE_GRANT_TYPE, clients: ANY_CLIENT, handle };
