/**
 * Server-rendered pages: Eta templates with auto-escaping, in src/web/views/. The folder is found
 * relative to the compiled file at the same depth from any build folder (dist/src/web/views.js →
 * ../../../src/web/views/), since the compiler does not copy .eta files.
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import { sessionCsrfToken } from './csrf.js';
import { knownSession } from './session.js';

export const VIEWS_DIR = fileURLToPath(new URL('../../../src/web/views/', import.meta.url));
export const ASSETS_DIR = fileURLToPath(new URL('../../../src/web/assets/', import.meta.url));

const eta = new Eta({ views: VIEWS_DIR, autoEscape: true, cache: true });

/** What the shared layout (views/layout.eta) shows around every page. */
export interface LayoutData {
  title: string;
  /** The signed-in user's name, shown with a sign-out button. */
  userName?: string | undefined;
  /** The session's CSRF token, needed by the sign-out form when a user is shown. */
  csrfToken?: string | undefined;
  /** The part of the site the page belongs to, marked in the navigation. */
  section?: 'dashboard' | 'account' | undefined;
  /** A page that uses a wide screen's width: the account page's columns, the demo callback's command. */
  wide?: boolean | undefined;
  /** Seconds after which the browser loads the page again: a page that follows work in progress without a script. */
  refreshSeconds?: number | undefined;
}

/** A way on from an error page. */
export interface Link {
  href: string;
  label: string;
  id?: string;
}

export function renderView(template: string, data: LayoutData & Record<string, unknown>): string {
  return eta.render(template, data);
}

/** Sends an HTML page; pages are never cached (they carry CSRF tokens and personal data). */
export function sendPage(
  reply: FastifyReply,
  template: string,
  data: LayoutData & Record<string, unknown>,
  status = 200,
): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(renderView(template, data));
}

/**
 * The plain error page, with the signed-in header when the request's session is known, and always
 * a way on: `links`, else the person's account (the sign-in page when signed out).
 */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  links?: Link | Link[],
): FastifyReply {
  const session = knownSession(reply.request);
  const signedIn = session ? { userName: session.user.display_name, csrfToken: sessionCsrfToken(session) } : {};
  const wayOn = links === undefined ? [homeLink(session !== null)] : Array.isArray(links) ? links : [links];
  return sendPage(reply, './error', { title, message, links: wayOn, ...signedIn }, status);
}

/**
 * Text with `code spans`, as developers write them in an app's description: the parts between two
 * backticks are shown as code (views/text.eta), each part escaped as any text. A backtick without
 * its pair stays as typed.
 */
export function codeSpans(text: string): Array<{ code: boolean; text: string }> {
  const parts = text.split('`');
  // An even number of parts means one backtick had no pair: it goes back into the last part.
  const last = parts.length % 2 === 0 ? parts.splice(-2, 2).join('`') : null;
  const spans = parts.map((part, i) => ({ code: i % 2 === 1 && part !== '', text: part }));
  if (last !== null) spans.push({ code: false, text: last });
  return spans.filter((span) => span.text !== '');
}

/** Where a person goes from a page with nowhere better to send them: their account, or sign-in. */
export function homeLink(signedIn: boolean): Link {
  return signedIn ? { href: '/account', label: 'Go to your account' } : { href: '/login', label: 'Sign in to Stride' };
}
