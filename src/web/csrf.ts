/**
 * CSRF protection for every state-changing form (SPEC §6).
 * - Signed in: a synchronizer token derived (HMAC-SHA256) from the session's CSRF secret.
 * - Before sign-in (login, sign-up): a double-submit cookie, compared with the form field.
 * Both are compared in constant time. SameSite=Lax cookies are a second line of defence.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../security/secrets.js';
import { isSecureOrigin, type Session } from './session.js';

/** The form field every state-changing form carries. */
export const CSRF_FIELD = 'csrf_token';
export const PRE_SESSION_CSRF_COOKIE = 'stride_csrf';

export function sessionCsrfToken(session: Session): string {
  return createHmac('sha256', session.csrfSecret).update('stride-csrf-v1').digest('base64url');
}

export function isValidSessionCsrf(session: Session, submitted: unknown): boolean {
  return typeof submitted === 'string' && constantTimeEqual(submitted, sessionCsrfToken(session));
}

/** The double-submit token for pre-sign-in forms; sets its cookie when the browser has none. */
export function preSessionCsrfToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[PRE_SESSION_CSRF_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  reply.setCookie(PRE_SESSION_CSRF_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: isSecureOrigin(request.server.ctx),
  });
  return token;
}

export function isValidPreSessionCsrf(request: FastifyRequest, submitted: unknown): boolean {
  const cookie = request.cookies[PRE_SESSION_CSRF_COOKIE];
  return typeof submitted === 'string' && typeof cookie === 'string' && cookie.length > 0 && constantTimeEqual(submitted, cookie);
}
