/**
 * Small helpers shared by the signed-in pages: reading form values, requiring a session, and the
 * CSRF check every state-changing form goes through (docs/SECURITY.md).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CSRF_FIELD, isValidSessionCsrf, sessionCsrfToken } from './csrf.js';
import { keepDraft } from './form-drafts.js';
import { currentSession, type Session } from './session.js';
import { sendErrorPage, type LayoutData } from './views.js';

export type Form = Record<string, unknown>;

export const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A field sent once, several times (checkboxes) or not at all, as a list of strings. */
export function values(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((v): v is string => typeof v === 'string');
}

/** Which part of the site a page belongs to, marked in the navigation. */
export type Section = 'dashboard' | 'account' | undefined;

/** What the layout needs for a signed-in page: the user's name, the sign-out token, the section. */
export function signedInLayout(session: Session, title: string, section?: Section): LayoutData & { section: Section } {
  return { title, userName: session.user.display_name, csrfToken: sessionCsrfToken(session), section };
}

/**
 * The session of a signed-in page, or null after sending the browser to sign in and come back.
 * A form posted without a session goes back to `returnTo` (its page), since a POST cannot be replayed.
 */
export async function requireSession(request: FastifyRequest, reply: FastifyReply, returnTo = request.url): Promise<Session | null> {
  const session = await currentSession(request);
  if (session) return session;
  const code = request.method === 'GET' ? 302 : 303;
  await reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}`, code);
  return null;
}

/**
 * For a POST: the session when the form carries its CSRF token. Otherwise the reply is sent and
 * null returned: 403, or — the session having ended — sign-in, then back to the form's page
 * (`returnTo`) with what was typed put back when the form was that session's own (form-drafts.ts).
 */
export async function requireSessionForm(request: FastifyRequest, reply: FastifyReply, returnTo: string): Promise<Session | null> {
  const session = await currentSession(request);
  const form = (request.body ?? {}) as Form;
  if (!session) {
    const kept = await keepDraft(request, reply, returnTo, form);
    await reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}&ended=${kept ? 'kept' : '1'}`, 303);
    return null;
  }
  if (!isValidSessionCsrf(session, form[CSRF_FIELD])) {
    await sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page (missing or wrong CSRF token). Reload the page and try again.');
    return null;
  }
  return session;
}

/** Formats a Unix time for a person in their own time zone, e.g. "3 Mar 2025, 14:05 (Europe/Berlin)". */
export function formatTime(seconds: number, timeZone: string): string {
  const formatted = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'short' }).format(new Date(seconds * 1000));
  return `${formatted} (${timeZone})`;
}

export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
