/**
 * Device cookies (OWASP "Slow Down Online Guessing Attacks with Device Cookies"; docs/web.md,
 * "Sign-in limits"): a browser where a person signed in successfully gets a cookie that names the
 * sign-in, and a later attempt for the same email that presents it is not held by the lockout that
 * strangers cause (sign-in-limit.ts).
 *
 * OWASP's cookie is LOGIN,NONCE,SIGNATURE with SIGNATURE = HMAC(key, LOGIN + "," + NONCE). Stride
 * signs exactly that, but leaves LOGIN out of the cookie itself: an attempt always names its email,
 * so checking the signature against the email of the attempt is OWASP's two checks ("the LOGIN in
 * the cookie is the attempt's", "the signature is valid") in one, and the browser does not keep the
 * email readable for months after signing out. The key is HMAC-SHA256's, derived (HKDF, its own
 * purpose) from the server's form key in the database, so every process accepts every cookie.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../security/secrets.js';
import { formSubkey } from './form-subkeys.js';
import { cookieName, cookieOptions } from './session.js';

const DEVICE_COOKIE = 'stride_device';
/** Half a year: the browser stays known between sign-ins; each sign-in issues a new cookie. */
export const DEVICE_COOKIE_SECONDS = 180 * 24 * 3600;
/** NONCE.SIGNATURE, both 32 bytes in base64url. */
const SYNTAX = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/;

/** The login a device cookie is bound to: the email as sign-in's per-email limit counts it. */
export function signInLogin(email: string): string {
  return email.trim().toLowerCase();
}

function deviceKey(request: FastifyRequest): Promise<Buffer> {
  return formSubkey(request, 'stride device cookie');
}

function signature(key: Buffer, login: string, nonce: string): string {
  return createHmac('sha256', key).update(`${login},${nonce}`).digest('base64url');
}

/** After a successful sign-in as `email`: a new device cookie, replacing any the browser had. */
export async function issueDeviceCookie(request: FastifyRequest, reply: FastifyReply, email: string): Promise<void> {
  const ctx = request.server.ctx;
  const nonce = randomBytes(32).toString('base64url');
  const value = `${nonce}.${signature(await deviceKey(request), signInLogin(email), nonce)}`;
  reply.setCookie(cookieName(ctx, DEVICE_COOKIE), value, cookieOptions(ctx, DEVICE_COOKIE_SECONDS));
}

/**
 * The nonce of the device cookie the request presents when it is valid for `email` (issued by
 * this server after a sign-in as that email), else null: no cookie, another email's, or altered.
 */
export async function deviceCookieFor(request: FastifyRequest, email: string): Promise<string | null> {
  const raw = request.cookies[cookieName(request.server.ctx, DEVICE_COOKIE)];
  const match = raw ? SYNTAX.exec(raw) : null;
  if (!match) return null;
  const [, nonce, signed] = match as unknown as [string, string, string];
  return constantTimeEqual(signed, signature(await deviceKey(request), signInLogin(email), nonce)) ? nonce : null;
}
