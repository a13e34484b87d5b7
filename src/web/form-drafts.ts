/**
 * What a person typed into a form that arrived after their session ended (docs/web.md, "A form sent
 * after the session ended"): kept in a short-lived sealed cookie for the form's page, and put back
 * into that form when the person, signed in again, lands on it. Nothing is submitted for them: the
 * form is shown filled in, with a fresh CSRF token, and they send it again themselves.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CSRF_FIELD } from './csrf.js';
import { setSealedCookie, takeSealedCookie } from './sealed-cookie.js';

type Form = Record<string, unknown>;

/** On a form filled in again from what was typed before the session ended. */
export const DRAFT_NOTICE = 'Your session ended before this form was sent. What you typed is back: check it and send it again.';

/** Fifteen minutes to sign in again; a draft larger than a cookie can hold is not kept. */
const COOKIE = { name: 'stride_form_draft', lifetimeSeconds: 900 };
const MAX_DRAFT_BYTES = 2800;
/** Never kept: the form's CSRF token, and anything that is a password. */
const NOT_KEPT = new Set([CSRF_FIELD, 'password', 'current_password', 'new_password']);

/** Keeps the fields of `form` for the page at `path`; false when there is nothing to keep. */
export async function keepDraft(request: FastifyRequest, reply: FastifyReply, path: string, form: unknown): Promise<boolean> {
  // A form's fields: names with a string, or a list of strings (checkboxes). Nothing else is a form.
  if (form === null || typeof form !== 'object' || Array.isArray(form)) return false;
  const isField = (value: unknown) => typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
  const fields = Object.fromEntries(Object.entries(form).filter(([name, value]) => !NOT_KEPT.has(name) && isField(value)));
  if (Object.keys(fields).length === 0 || JSON.stringify(fields).length > MAX_DRAFT_BYTES) return false;
  await setSealedCookie(request, reply, COOKIE, path, fields);
  return true;
}

/** The draft kept for the page at `path`, once; null when there is none. */
export async function takeDraft(request: FastifyRequest, reply: FastifyReply, path: string): Promise<Form | null> {
  const draft = await takeSealedCookie(request, reply, COOKIE, path);
  return draft !== null && typeof draft === 'object' ? (draft as Form) : null;
}
