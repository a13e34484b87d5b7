/**
 * Server-rendered pages: Eta templates with auto-escaping, in src/web/views/. The folder is found
 * relative to the compiled file at the same depth from any build folder (dist/src/web/views.js →
 * ../../../src/web/views/), since the compiler does not copy .eta files.
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';

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
 * The plain error page (e.g. an authorization request that cannot be redirected back). Without a
 * `link`, it tells the user to go back to the app they came from.
 */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  link?: { href: string; label: string },
): FastifyReply {
  return sendPage(reply, './error', { title, message, link: link ?? null }, status);
}
