/**
 * Browser sessions (docs/oauth.md, "Sign-in"; docs/SECURITY.md). The cookie holds a random
 * credential; the database keeps only its SHA-256, with the user and a per-session CSRF secret. A
 * new id at every sign-in (no fixation); signing out deletes the row, so the cookie is dead on
 * every process at once.
 */
import { randomBytes } from 'node:crypto';
import { fastifyCookie } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { hashCredential, newCredential } from '../security/secrets.js';
import type { User } from '../store/users.js';
import { ENDED_SESSION_KEPT_SECONDS, LAST_SEEN_PRECISION_SECONDS, type EndedSession } from '../store/sessions.js';

/** The session cookie's name on http; on https it carries the __Host- prefix (cookieName). */
export const SESSION_COOKIE = 'stride_session';

export interface Session {
  idHash: string;
  user: User;
  csrfSecret: string;
  expiresAt: number;
}

const cache = new WeakMap<FastifyRequest, Session | null>();

export function isSecureOrigin(ctx: AppContext): boolean {
  return ctx.config.publicUrl.startsWith('https:');
}

/**
 * On https, cookies carry the `__Host-` prefix: browsers accept such a cookie only when it is
 * Secure, for Path=/ and without Domain, set by this very host — a sibling subdomain or a network
 * attacker on plain http cannot plant one (RFC 6265bis §4.1.3.2).
 */
export function cookieName(ctx: AppContext, name: string): string {
  return isSecureOrigin(ctx) ? `__Host-${name}` : name;
}

export function sessionCookieName(ctx: AppContext): string {
  return cookieName(ctx, SESSION_COOKIE);
}

/** The attributes of every cookie Stride sets; on https they are what a `__Host-` name requires. */
export function cookieOptions(ctx: AppContext, maxAge?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: isSecureOrigin(ctx),
    ...(maxAge !== undefined && { maxAge }),
  };
}

/**
 * The session cookie's value. The cookie plugin parses cookies on the pages' scope only; a page
 * answered outside it (a page not found) reads the header itself.
 */
function sessionCookieValue(request: FastifyRequest): string | undefined {
  const name = sessionCookieName(request.server.ctx);
  if (request.cookies !== undefined) return request.cookies[name];
  return request.headers.cookie === undefined ? undefined : fastifyCookie.parse(request.headers.cookie)[name];
}

/** The signed-in session of this request, or null. Looked up once per request. */
export async function currentSession(request: FastifyRequest): Promise<Session | null> {
  if (cache.has(request)) return cache.get(request)!;
  const ctx = request.server.ctx;
  const raw = sessionCookieValue(request);
  let session: Session | null = null;
  if (raw) {
    const idHash = hashCredential(raw);
    const now = ctx.clock();
    const live = await ctx.stores.sessions.findLive(idHash, now);
    if (live) {
      session = { idHash, user: live.user, csrfSecret: live.csrfSecret, expiresAt: live.expiresAt };
      if (live.lastSeenAt === null || now - live.lastSeenAt >= LAST_SEEN_PRECISION_SECONDS) await ctx.stores.sessions.touch(idHash, now);
    }
  }
  cache.set(request, session);
  return session;
}

/** The session of this request when it was looked up already (currentSession), without a lookup. */
export function knownSession(request: FastifyRequest): Session | null {
  return cache.get(request) ?? null;
}

/**
 * The session this request's cookie names, when it has ended at most ENDED_SESSION_KEPT_SECONDS
 * ago; null without a cookie, with a live session, or for one ended on purpose (signed out, ended
 * from the account page, a password change), whose row is gone.
 */
export async function endedSession(request: FastifyRequest): Promise<EndedSession | null> {
  const ctx = request.server.ctx;
  const raw = request.cookies[sessionCookieName(ctx)];
  if (!raw) return null;
  return (await ctx.stores.sessions.findEnded(hashCredential(raw), ctx.clock())) ?? null;
}

/** Signs a user in: ends any session the browser had, then a new id and a new CSRF secret. */
export async function startSession(request: FastifyRequest, reply: FastifyReply, user: User): Promise<Session> {
  const ctx = request.server.ctx;
  const previous = request.cookies[sessionCookieName(ctx)];
  if (previous) await ctx.stores.sessions.delete(hashCredential(previous));
  const raw = newCredential('session');
  const now = ctx.clock();
  const session: Session = {
    idHash: hashCredential(raw),
    user,
    csrfSecret: randomBytes(32).toString('base64url'),
    expiresAt: now + ctx.config.sessionTtl,
  };
  await ctx.stores.sessions.insert({
    id_hash: session.idHash,
    user_id: user.id,
    csrf_secret: session.csrfSecret,
    created_at: now,
    expires_at: session.expiresAt,
    user_agent: request.headers['user-agent']?.slice(0, 300) ?? null,
    address: request.ip,
  });
  // The browser keeps the cookie a little past the session, so that a form sent from one of its
  // pages after it ended is still known to be this person's (endedSession).
  reply.setCookie(sessionCookieName(ctx), raw, cookieOptions(ctx, ctx.config.sessionTtl + ENDED_SESSION_KEPT_SECONDS));
  cache.set(request, session);
  return session;
}

export async function endSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const ctx = request.server.ctx;
  const raw = request.cookies[sessionCookieName(ctx)];
  if (raw) await ctx.stores.sessions.delete(hashCredential(raw));
  reply.clearCookie(sessionCookieName(ctx), cookieOptions(ctx));
  cache.set(request, null);
}

/**
 * A `return_to` that is safe to redirect to: a local path only ("/…", never "//host" or "/\\host",
 * which browsers treat as another origin). Anything else becomes `fallback`. The result is ASCII:
 * it becomes a Location header, which holds no other characters (RFC 9110 §5.5).
 */
export function safeReturnTo(value: unknown, fallback = '/account'): string {
  if (typeof value !== 'string' || value.length > 4000) return fallback;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return fallback;
  // Control characters (tabs, newlines) are dropped by URL parsers and could turn "/\t/x" into "//x".
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return fallback;
  // A lone surrogate is not text and has no UTF-8 form to percent-encode.
  if (/\p{Cs}/u.test(value)) return fallback;
  // Spaces and non-ASCII characters percent-encoded as UTF-8, as a browser sends them ("/€" → "/%E2%82%AC").
  return value.replace(/[^\x21-\x7e]+/gu, (run) => encodeURIComponent(run));
}
