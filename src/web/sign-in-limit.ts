/**
 * The per-account limit of failed sign-ins (RATE_LIMIT_LOGIN_ACCOUNT; docs/web.md, "Sign-in
 * limits"), laid out as OWASP's "Slow Down Online Guessing Attacks with Device Cookies" does:
 * - an attempt presenting a valid device cookie for the email it names (device-cookie.ts) counts
 *   against that cookie, and once the cookie has spent the limit only that cookie is refused
 *   (OWASP's per-device-cookie lockout);
 * - every other attempt counts against the email, whatever address it comes from (OWASP's lockout
 *   of untrusted clients), as before device cookies.
 * Only failures count (http/rate-limit.ts, failureLimit): a person who knows their password signs
 * in from as many fresh browsers as they like. An unknown email's failures count as a known one's,
 * so being limited says nothing about whether an account has it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { failureLimit } from '../http/rate-limit.js';
import { deviceCookieFor, signInLogin } from './device-cookie.js';

export interface SignInLimit {
  /** Before the password is checked: 429 while this attempt's key has spent its failures. */
  check(request: FastifyRequest): Promise<void>;
  /** After a failed attempt: counts it against the same key. */
  failed(request: FastifyRequest): Promise<void>;
}

/** Null when the limit is off. */
export function signInAccountLimit(app: FastifyInstance): SignInLimit | null {
  const limit = app.ctx.config.rateLimits.loginAccount;
  const perEmail = failureLimit(app, limit, 'login-account');
  const perDevice = failureLimit(app, limit, 'login-device');
  if (!perEmail || !perDevice) return null;
  // The key is the email as typed (normalised), or the browser's device cookie for it.
  const keyOf = async (request: FastifyRequest) => {
    const email = ((request.body ?? {}) as Record<string, unknown>).email;
    const login = signInLogin(typeof email === 'string' ? email : '');
    const device = await deviceCookieFor(request, login);
    return device ? { limit: perDevice, key: device, words: 'too many failed sign-ins from this browser' } : { limit: perEmail, key: login, words: 'too many failed sign-ins for this email address' };
  };
  return {
    async check(request) {
      const { limit: counter, key, words } = await keyOf(request);
      await counter.refuseWhenSpent(request, key, words);
    },
    async failed(request) {
      const { limit: counter, key } = await keyOf(request);
      await counter.countFailure(request, key);
    },
  };
}
