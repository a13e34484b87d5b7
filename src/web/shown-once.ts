/**
 * A client secret shown once, on the page a form's redirect lands on (POST-redirect-GET,
 * docs/web.md "The client secret is shown once"). Stride keeps only the secret's hash, so the POST
 * seals the secret into a short-lived cookie bound to the signed-in user and the app, and the GET
 * takes it out: a reload finds nothing and says the secret was already shown, never making a new one.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { setSealedCookie, takeSealedCookie } from './sealed-cookie.js';
import type { Session } from './session.js';

/** Five minutes: long enough for the redirect to land, however slow the connection. */
const COOKIE = { name: 'stride_secret_once', lifetimeSeconds: 300 };

const boundTo = (session: Session, clientId: string) => `${session.user.id} ${clientId}`;

export function keepSecretForOnce(request: FastifyRequest, reply: FastifyReply, session: Session, clientId: string, secret: string): Promise<void> {
  return setSealedCookie(request, reply, COOKIE, boundTo(session, clientId), secret);
}

/** The secret kept for this app's page, once; null when there is none (already shown, expired, another app's). */
export async function takeSecretShownOnce(request: FastifyRequest, reply: FastifyReply, session: Session, clientId: string): Promise<string | null> {
  const secret = await takeSealedCookie(request, reply, COOKIE, boundTo(session, clientId));
  return typeof secret === 'string' ? secret : null;
}
