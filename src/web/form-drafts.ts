/**
 * What a person typed into a form that arrived after their session ended (docs/web.md, "A form sent
 * after the session ended"): kept in a short-lived sealed cookie for the form's page, and put back
 * into that form when the person, signed in again, lands on it. Nothing is submitted for them: the
 * form is shown filled in, with a fresh CSRF token, and they send it again themselves.
 *
 * A draft is that person's only: it is kept only when the request carries the ended session's
 * cookie and the form carries that session's CSRF token — so another site, whose POST carries no
 * cookie (SameSite=Lax), cannot plant one — and it is sealed for the session's user, so it opens
 * for nobody else, and is dropped when someone else signs in on the browser.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../store/users.js';
import { CSRF_FIELD, isValidSessionCsrf } from './csrf.js';
import { clearSealedCookie, readSealedCookie, setSealedCookie, takeSealedCookie } from './sealed-cookie.js';
import { endedSession, type Session } from './session.js';

type Form = Record<string, unknown>;

/** On a form filled in again from what was typed before the session ended. */
export const DRAFT_NOTICE = 'Your session ended before this form was sent. What you typed is back: check it and send it again.';

/** Fifteen minutes to sign in again; a draft larger than a cookie can hold is not kept. */
const COOKIE = { name: 'stride_form_draft', lifetimeSeconds: 900 };
const MAX_DRAFT_BYTES = 2800;
/** Never kept: the form's CSRF token, and anything that is a password or a secret. */
const NOT_KEPT = new Set([CSRF_FIELD, 'password', 'current_password', 'new_password', 'client_secret']);

/** Sealed as additional data: a draft opens only for the person it was typed by. */
const ownedBy = (userId: string) => `draft of ${userId}`;

interface Draft {
  path: string;
  fields: Form;
}

/**
 * Keeps the fields of `form` for the page at `path`, for the person whose session ended; false when
 * nothing is kept: no ended session of theirs on this request, a form that is not one of its pages',
 * or nothing to keep.
 */
export async function keepDraft(request: FastifyRequest, reply: FastifyReply, path: string, form: unknown): Promise<boolean> {
  // A form's fields: names with a string, or a list of strings (checkboxes). Nothing else is a form.
  if (form === null || typeof form !== 'object' || Array.isArray(form)) return false;
  const ended = await endedSession(request);
  if (!ended || !isValidSessionCsrf(ended, (form as Form)[CSRF_FIELD])) return false;
  const isField = (value: unknown) => typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
  const fields = Object.fromEntries(Object.entries(form).filter(([name, value]) => !NOT_KEPT.has(name) && isField(value)));
  if (Object.keys(fields).length === 0 || JSON.stringify(fields).length > MAX_DRAFT_BYTES) return false;
  const draft: Draft = { path, fields };
  await setSealedCookie(request, reply, COOKIE, ownedBy(ended.userId), draft);
  return true;
}

/** The signed-in person's draft for the page at `path`, once; null when there is none. */
export async function takeDraft(request: FastifyRequest, reply: FastifyReply, session: Session, path: string): Promise<Form | null> {
  const draft = (await takeSealedCookie(request, reply, COOKIE, ownedBy(session.user.id))) as Draft | undefined;
  return draft?.path === path && draft.fields !== null && typeof draft.fields === 'object' ? draft.fields : null;
}

/** At sign-in: a draft someone else typed is dropped, so it never reaches this person's forms. */
export async function dropDraftOfOthers(request: FastifyRequest, reply: FastifyReply, user: User): Promise<void> {
  if ((await readSealedCookie(request, COOKIE, ownedBy(user.id))) === undefined) clearSealedCookie(request, reply, COOKIE);
}
