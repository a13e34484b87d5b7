/**
 * CSRF protection for every state-changing form (docs/web.md, docs/SECURITY.md).
 * - Signed in: a synchronizer token derived (HMAC-SHA256) from the session's CSRF secret.
 * - Before sign-in (login, sign-up): a signed double-submit cookie (OWASP CSRF Prevention Cheat
 *   Sheet): the cookie holds a random nonce and the form field HMAC-SHA256(server key, nonce), the
 *   key being a secret of the server kept in its database. Someone who can plant a cookie cannot
 *   make up a pair the server accepts, and with an https public URL the cookie's `__Host-` name
 *   keeps other hosts from planting one at all.
 * Both are compared in constant time. SameSite=Lax cookies are a second line of defence.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../security/secrets.js';
import { cookieName, cookieOptions, type Session } from './session.js';

/** The form field every state-changing form carries. */
export const CSRF_FIELD = 'csrf_token';
const PRE_SESSION_CSRF_COOKIE = 'stride_csrf';
const NONCE_SYNTAX = /^[A-Za-z0-9_-]{43}$/;

/** The token of a session's forms; an ended session's secret still says whether a form was one of its own. */
export function sessionCsrfToken(session: Pick<Session, 'csrfSecret'>): string {
  return createHmac('sha256', session.csrfSecret).update('stride-csrf-v1').digest('base64url');
}

export function isValidSessionCsrf(session: Pick<Session, 'csrfSecret'>, submitted: unknown): boolean {
  return typeof submitted === 'string' && constantTimeEqual(submitted, sessionCsrfToken(session));
}

export function preSessionCsrfCookieName(request: FastifyRequest): string {
  return cookieName(request.server.ctx, PRE_SESSION_CSRF_COOKIE);
}

/** The form token that goes with the cookie's `nonce`. */
export function signPreSessionNonce(key: Buffer, nonce: string): string {
  return createHmac('sha256', key).update(`stride-pre-session-csrf-v1:${nonce}`).digest('base64url');
}

/** The token for pre-sign-in forms; sets the cookie's nonce when the browser has none. */
export async function preSessionCsrfToken(request: FastifyRequest, reply: FastifyReply): Promise<string> {
  const name = preSessionCsrfCookieName(request);
  let nonce = request.cookies[name];
  if (!nonce || !NONCE_SYNTAX.test(nonce)) {
    nonce = randomBytes(32).toString('base64url');
    reply.setCookie(name, nonce, cookieOptions(request.server.ctx));
  }
  return signPreSessionNonce(await request.server.serverSecrets.preSessionCsrf(), nonce);
}

export async function isValidPreSessionCsrf(request: FastifyRequest, submitted: unknown): Promise<boolean> {
  const nonce = request.cookies[preSessionCsrfCookieName(request)];
  if (typeof submitted !== 'string' || typeof nonce !== 'string' || !NONCE_SYNTAX.test(nonce)) return false;
  return constantTimeEqual(submitted, signPreSessionNonce(await request.server.serverSecrets.preSessionCsrf(), nonce));
}
