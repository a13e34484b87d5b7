/**
 * The device authorization request (RFC 8628 §3.1–3.2, docs/oauth.md "Device authorization"): a
 * device with no browser asks for a device code, which it polls the token endpoint with, and a
 * short user code, which a person types at `/device` on another screen.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { DEVICE_CODE_GRANT_TYPE } from './grant-types.js';
import { unheldWords } from '../domain/scope-request.js';
import { formatScopes, parseScopeString } from '../domain/scopes.js';
import { hashCredential, newCredential } from '../security/secrets.js';
import type { App } from '../store/apps.js';
import { consentOutcome, requestedScopes, scopeProblem } from './authorize.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { FormParameters } from './grant.js';

/** RFC 8628 §6.1: consonants only (no vowels, so no words), none that look alike (no I, O, U, Y). */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;
/** User codes drawn for one request before giving up (each draw is one insert). */
const MAX_USER_CODE_DRAWS = 5;
/** Seconds a device request lives (RFC 8628 §3.2 `expires_in`). */
export const DEVICE_CODE_TTL = 600;
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** A new user code as shown: XXXX-XXXX. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, as stored: upper case, without hyphens and spaces (RFC 8628 §6.1: compared
 * case- and punctuation-insensitively). Null when it cannot be a user code at all.
 */
export function normalizeUserCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s\-‐-―]/g, '');
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const letter of code) if (!USER_CODE_ALPHABET.includes(letter)) return null;
  return code;
}

export const userCodeHash = (normalized: string): string => hashCredential(`user-code:${normalized}`);

/** The page a person opens (RFC 8628 §3.2), on the server that shows the sign-in pages. */
export function verificationUri(ctx: AppContext): string {
  return `${ctx.config.authUrl}/device`;
}

export async function startDeviceAuthorization(ctx: AppContext, client: AuthenticatedClient, body: FormParameters): Promise<DeviceAuthorizationResponse> {
  const app = client.app;
  if (!app.grantTypes.includes(DEVICE_CODE_GRANT_TYPE)) {
    throw new ApiError('unauthorized_client', `this app may not use grant_type ${DEVICE_CODE_GRANT_TYPE}; its developer can allow it in the app's settings`);
  }
  // Read as at the authorization endpoint: without `scope`, the app's registered set.
  const asked = requestedScopes(app, body.scope);
  if (!asked.ok) throw new ApiError('invalid_scope', scopeProblem(asked));

  const now = ctx.clock();
  const deviceCode = newCredential('deviceCode');
  // 20^8 user codes: among 10,000 live requests a new one is taken about once in 2.5 million draws,
  // so a few draws always find a free one.
  let userCode: string;
  for (let draw = 1; ; draw++) {
    userCode = newUserCode();
    const stored = await ctx.stores.deviceCodes.insert({
      device_code_hash: hashCredential(deviceCode),
      user_code_hash: userCodeHash(normalizeUserCode(userCode)!),
      app_id: app.id,
      scope: asked.scopes.join(' '),
      status: 'pending',
      user_id: null,
      grant_id: null,
      poll_interval: ctx.config.devicePollInterval,
      last_polled_at: null,
      expires_at: now + DEVICE_CODE_TTL,
      created_at: now,
      requested_scope: asked.worded,
    });
    if (stored) break;
    if (draw === MAX_USER_CODE_DRAWS) throw new Error(`no free user code in ${MAX_USER_CODE_DRAWS} draws`);
  }
  const uri = verificationUri(ctx);
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: uri,
    verification_uri_complete: `${uri}?user_code=${userCode}`,
    expires_in: DEVICE_CODE_TTL,
    interval: ctx.config.devicePollInterval,
  };
}

/** A request a person may answer: the one with this user code, pending and live. */
export interface PendingDeviceRequest {
  app: App;
  scopes: string[];
  /** The Fitbit words of data Stride does not hold that it asked for: granted as nothing. */
  unheld: string[];
  /** As shown: XXXX-XXXX. */
  userCode: string;
  deviceCodeHash: string;
}

/** The pending, live request whose user code was typed, if any. */
export async function findPendingDeviceRequest(ctx: AppContext, typed: string): Promise<PendingDeviceRequest | undefined> {
  const normalized = normalizeUserCode(typed);
  if (normalized === null) return undefined;
  const row = await ctx.stores.deviceCodes.findByUserCode(userCodeHash(normalized));
  if (!row || row.status !== 'pending' || row.expires_at <= ctx.clock()) return undefined;
  const app = await ctx.stores.apps.findById(row.app_id);
  // An app whose developer has since withdrawn the device grant could never redeem an approval.
  if (!app?.grantTypes.includes(DEVICE_CODE_GRANT_TYPE)) return undefined;
  return { app, scopes: parseScopeString(row.scope), unheld: unheldWords(row.requested_scope), userCode: `${normalized.slice(0, 4)}-${normalized.slice(4)}`, deviceCodeHash: row.device_code_hash };
}

/**
 * The person allowed the request with the ticked scopes (each one asked for): the grant records
 * the consent as at the authorization endpoint (consentOutcome), and the request is approved in
 * the same transaction. False when it expired or was answered meanwhile, or the app no longer has
 * a scope.
 */
export async function approveDeviceRequest(ctx: AppContext, request: PendingDeviceRequest, userId: string, granted: string[]): Promise<boolean> {
  const scopes = request.scopes.filter((scope) => granted.includes(scope));
  if (scopes.length === 0) return false;
  return ctx.stores.grants.recordConsent(
    { userId, appId: request.app.id, newGrantId: randomUUID(), granted: scopes, issue: { deviceCodeHash: request.deviceCodeHash, scope: formatScopes(scopes) }, now: ctx.clock() },
    (previousScope) => consentOutcome(parseScopeString(previousScope), request.scopes, scopes),
  );
}

/** The person denied the request: the device's next poll hears access_denied. */
export async function denyDeviceRequest(ctx: AppContext, request: PendingDeviceRequest): Promise<void> {
  await ctx.stores.deviceCodes.deny(request.deviceCodeHash, ctx.clock());
}
