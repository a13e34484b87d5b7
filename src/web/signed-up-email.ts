/**
 * The email a sign-up was sent with, kept for the sign-in page that follows so the person does not
 * type it again. It travels in a sealed cookie rather than the sign-in page's address, which would
 * put it in the server's request log and the browser's history. The cookie is the same whether or
 * not the email had an account, as the answer to sign-up is.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clearSealedCookie, readSealedCookie, setSealedCookie, type SealedCookie } from './sealed-cookie.js';

const COOKIE: SealedCookie = { name: 'signed_up', lifetimeSeconds: 15 * 60 };
const BOUND_TO = 'the email of a sign-up';

export function keepSignedUpEmail(request: FastifyRequest, reply: FastifyReply, email: string): Promise<void> {
  return setSealedCookie(request, reply, COOKIE, BOUND_TO, email);
}

/** The kept email, or '' (kept for a reload of the sign-in page). */
export async function signedUpEmail(request: FastifyRequest): Promise<string> {
  const value = await readSealedCookie(request, COOKIE, BOUND_TO);
  return typeof value === 'string' ? value : '';
}

export function forgetSignedUpEmail(request: FastifyRequest, reply: FastifyReply): void {
  clearSealedCookie(request, reply, COOKIE);
}
