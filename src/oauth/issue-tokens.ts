/**
 * Minting an access/refresh token pair and the token response of RFC 6749 §5.1. Only their keys
 * (tokenKey: issue time and SHA-256) are stored; the raw values exist in the response alone.
 */
import type { Config } from '../config.js';
import { answeredScope } from '../domain/scope-request.js';
import { newTokenPair, tokenKey } from '../security/secrets.js';
import type { NewRefreshTokenRow, NewTokenRow } from '../store/tokens.js';

export interface TokenResponse {
  access_token: string;
  /** DPoP when the access token is bound to a key (RFC 9449 §5). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  refresh_token: string;
  /** Stride's scope names, or the words the app asked with (domain/scope-request.ts, answeredScope). */
  scope: string;
  /** The person the tokens act for: the `id` of their profile, which Fitbit's clients read as `user_id`. */
  user_id: string;
}

export interface MintedPair {
  response: TokenResponse;
  access: NewTokenRow;
  refresh: NewRefreshTokenRow;
}

export interface PairSubject {
  familyId: string;
  grantId: string;
  appId: string;
  userId: string;
  scope: string;
  /** The authorization request's scope as the app worded it in Fitbit's words, or null (AuthorizationCodeTable). */
  requestedScope: string | null;
  /** The thumbprint the access token is bound to (RFC 9449 §6); null for a bearer token. */
  accessJkt: string | null;
  /** The thumbprint the refresh token is bound to: a public client's DPoP key (RFC 9449 §5). */
  refreshJkt: string | null;
}

export function mintTokenPair(config: Config, now: number, subject: PairSubject): MintedPair {
  const { accessToken, refreshToken } = newTokenPair();
  return {
    response: {
      access_token: accessToken,
      token_type: subject.accessJkt === null ? 'Bearer' : 'DPoP',
      expires_in: config.accessTokenTtl,
      refresh_token: refreshToken,
      scope: answeredScope(subject.scope, subject.requestedScope),
      user_id: subject.userId,
    },
    access: tokenRow(accessToken, subject, now, config.accessTokenTtl, subject.accessJkt),
    refresh: tokenRow(refreshToken, subject, now, config.refreshTokenTtl, subject.refreshJkt),
  };
}

/**
 * One literal, not `{ ...shared, more }`: V8 builds an object that spreads another and adds
 * properties through its slow path, one property at a time, on every call.
 */
function tokenRow(token: string, subject: PairSubject, now: number, lifetime: number, jkt: string | null): NewRefreshTokenRow {
  return {
    token_key: tokenKey(token),
    family_id: subject.familyId,
    grant_id: subject.grantId,
    app_id: subject.appId,
    user_id: subject.userId,
    scope: subject.scope,
    created_at: now,
    expires_at: now + lifetime,
    jkt,
    // Kept on the refresh token only; the access token's insert does not read it.
    requested_scope: subject.requestedScope,
  };
}

/** RFC 6749 §5.1: token responses must not be cached. */
export const NO_STORE_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;
