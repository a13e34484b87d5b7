/**
 * Short-lived cookies whose contents only this server can read or make: AES-256-GCM under a key
 * derived (HKDF, per purpose) from the server's form key, with what the contents belong to bound
 * as additional data. Taking one clears it, so each is used at most once.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formSubkey } from './form-subkeys.js';
import { cookieName, cookieOptions } from './session.js';

function sealingKey(request: FastifyRequest, purpose: string): Promise<Buffer> {
  return formSubkey(request, `stride sealed cookie: ${purpose}`);
}

export interface SealedCookie {
  /** The cookie's name (`__Host-` prefixed on https) and the key's purpose. */
  name: string;
  lifetimeSeconds: number;
}

export async function setSealedCookie(request: FastifyRequest, reply: FastifyReply, cookie: SealedCookie, boundTo: string, value: unknown): Promise<void> {
  const ctx = request.server.ctx;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await sealingKey(request, cookie.name), iv).setAAD(Buffer.from(boundTo));
  const sealed = Buffer.concat([cipher.update(JSON.stringify({ value, until: ctx.clock() + cookie.lifetimeSeconds })), cipher.final()]);
  reply.setCookie(cookieName(ctx, cookie.name), Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url'), cookieOptions(ctx, cookie.lifetimeSeconds));
}

/** The cookie's value if it is there, in time and bound to `boundTo`; undefined otherwise. The cookie stays. */
export async function readSealedCookie(request: FastifyRequest, cookie: SealedCookie, boundTo: string): Promise<unknown> {
  const ctx = request.server.ctx;
  const raw = request.cookies[cookieName(ctx, cookie.name)];
  if (!raw) return undefined;
  try {
    const bytes = Buffer.from(raw, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', await sealingKey(request, cookie.name), bytes.subarray(0, 12)).setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const kept = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as { value: unknown; until: number };
    return kept.until >= ctx.clock() ? kept.value : undefined;
  } catch {
    // Bound to something else, or altered: nothing.
    return undefined;
  }
}

export function clearSealedCookie(request: FastifyRequest, reply: FastifyReply, cookie: SealedCookie): void {
  const ctx = request.server.ctx;
  const name = cookieName(ctx, cookie.name);
  if (request.cookies[name]) reply.clearCookie(name, cookieOptions(ctx));
}

/** The cookie's value if it is there, in time and bound to `boundTo`; the cookie is cleared either way. */
export async function takeSealedCookie(request: FastifyRequest, reply: FastifyReply, cookie: SealedCookie, boundTo: string): Promise<unknown> {
  const value = await readSealedCookie(request, cookie, boundTo);
  clearSealedCookie(request, reply, cookie);
  return value;
}
