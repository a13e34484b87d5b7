/**
 * The per-account limit of sign-in attempts (RATE_LIMIT_LOGIN_ACCOUNT; docs/web.md, "Sign-in
 * limits"), laid out as OWASP's "Slow Down Online Guessing Attacks with Device Cookies" does:
 * - an attempt presenting a valid device cookie for the email it names (device-cookie.ts) counts
 *   against that cookie, and once the cookie has spent the limit only that cookie is refused
 *   (OWASP's per-device-cookie lockout);
 * - every other attempt counts against the email, whatever address it comes from (OWASP's lockout
 *   of untrusted clients), as before device cookies.
 * Strangers spending an email's allowance so keep out only browsers the person never signed in on,
 * and the attempts of the person's own browsers are not theirs to spend.
 */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { keyedRateLimit, refuseWhenExceeded } from '../http/rate-limit.js';
import { deviceCookieFor, signInLogin } from './device-cookie.js';

/** A `preHandler` for POST /login that counts the attempt; null when the limit is off. */
export function signInAccountLimit(app: FastifyInstance): preHandlerAsyncHookHandler | null {
  const limit = app.ctx.config.rateLimits.loginAccount;
  const perEmail = keyedRateLimit(app, limit, 'login-account');
  const perDevice = keyedRateLimit(app, limit, 'login-device');
  if (!perEmail || !perDevice) return null;
  return async (request) => {
    const email = ((request.body ?? {}) as Record<string, unknown>).email;
    // The key is the email as typed (normalised), so being limited says nothing about whether an
    // account has it.
    const login = signInLogin(typeof email === 'string' ? email : '');
    const device = await deviceCookieFor(request, login);
    if (device) refuseWhenExceeded(await perDevice(request, device), 'too many sign-in attempts from this browser');
    else refuseWhenExceeded(await perEmail(request, login), 'too many sign-in attempts for this email address');
  };
}
