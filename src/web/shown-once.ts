/**
 * A client secret shown once, on the page a form's redirect lands on (POST-redirect-GET,
 * docs/web.md "Secrets shown once"). Stride keeps only the secret's hash, so the POST seals the
 * secret into a short-lived cookie — AES-256-GCM under a key derived from the server's form key,
 * bound to the signed-in user and the app — and the GET takes it out and clears the cookie: a
 * reload finds nothing and says the secret was already shown, never making a new one.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookieName, cookieOptions, type Session } from './session.js';

const COOKIE = 'stride_secret_once';
/** Long enough for the redirect to land, however slow the connection. */
const LIFETIME_SECONDS = 300;

async function sealingKey(request: FastifyRequest): Promise<Buffer> {
  const formKey = await request.server.serverSecrets.preSessionCsrf();
  return Buffer.from(hkdfSync('sha256', formKey, Buffer.alloc(0), 'stride: a client secret shown once', 32));
}

const boundTo = (session: Session, clientId: string) => Buffer.from(`${session.user.id} ${clientId}`);

export async function keepSecretForOnce(request: FastifyRequest, reply: FastifyReply, session: Session, clientId: string, secret: string): Promise<void> {
  const ctx = request.server.ctx;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await sealingKey(request), iv).setAAD(boundTo(session, clientId));
  const sealed = Buffer.concat([cipher.update(JSON.stringify({ secret, until: ctx.clock() + LIFETIME_SECONDS })), cipher.final()]);
  reply.setCookie(cookieName(ctx, COOKIE), Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url'), cookieOptions(ctx, LIFETIME_SECONDS));
}

/** The secret kept for this app's page, once; null when there is none (already shown, expired, forged). */
export async function takeSecretShownOnce(request: FastifyRequest, reply: FastifyReply, session: Session, clientId: string): Promise<string | null> {
  const ctx = request.server.ctx;
  const name = cookieName(ctx, COOKIE);
  const raw = request.cookies[name];
  if (!raw) return null;
  reply.clearCookie(name, cookieOptions(ctx));
  try {
    const bytes = Buffer.from(raw, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', await sealingKey(request), bytes.subarray(0, 12)).setAAD(boundTo(session, clientId));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const kept = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as { secret: string; until: number };
    return kept.until >= ctx.clock() ? kept.secret : null;
  } catch {
    // Another app's, another user's, or altered: nothing to show.
    return null;
  }
}
