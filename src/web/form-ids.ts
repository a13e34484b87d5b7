/**
 * The one guard against a form that makes something (an app, a webhook endpoint, test people) making it twice
 * (docs/decisions/0018-dashboard-app-scope-and-form-ids.md). The form's page has an id in its
 * address (`?form=…`, given by a redirect when the page is opened without one), so a reload or
 * Back and send finds the same id again; the form carries it in a hidden field, and a draft kept
 * after the session ended keeps it too. What the form makes is named by an HMAC, under the
 * session's secret, of that id and of what identifies the thing (an app's name, type, redirect URIs
 * and scopes; an endpoint's URL and events): the same form sent again — a double click, a reload,
 * Back and send, two sends at once — names what it made already, and the database's unique key lets
 * only one of two concurrent sends make it. The same page sent with other settings makes another.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session } from './session.js';

/** The hidden field, and the query parameter of the form's page. */
export const FORM_ID_FIELD = 'form_id';
const QUERY = 'form';
const SYNTAX = /^[A-Za-z0-9_-]{22}$/;

export function isFormId(value: unknown): value is string {
  return typeof value === 'string' && SYNTAX.test(value);
}

/**
 * The form id of the page this GET shows; when the address has none, a redirect to the same
 * address with a new one is sent and null returned.
 */
export function formIdOfPage(request: FastifyRequest, reply: FastifyReply): string | null {
  const query = request.query as Record<string, unknown>;
  if (isFormId(query[QUERY])) return query[QUERY];
  const [path, search] = request.url.split('?') as [string, string | undefined];
  const params = new URLSearchParams(search);
  params.set(QUERY, randomBytes(16).toString('base64url'));
  void reply.redirect(`${path}?${params}`, 302);
  return null;
}

/** The address of a form's page with its id: where the person comes back to after signing in. */
export function pageWithFormId(path: string, formId: unknown): string {
  return isFormId(formId) ? `${path}?${QUERY}=${formId}` : path;
}

/** What identifies the thing a form makes, for formMade; the order of `parts` is the caller's. */
export type Identity = ReadonlyArray<string | boolean | readonly string[]>;

/**
 * The name of what the form `formId`, sent with `identity`, makes for this person: 32 hex digits,
 * the same for every send of that form with those settings, and unguessable to anyone else.
 */
export function formMade(session: Pick<Session, 'csrfSecret'>, purpose: 'app-registration' | 'webhook-endpoint' | 'test-people', formId: string, identity: Identity): string {
  return createHmac('sha256', session.csrfSecret).update(JSON.stringify([purpose, formId, identity])).digest('hex').slice(0, 32);
}
