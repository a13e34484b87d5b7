/**
 * Errors as a person sees them (docs/web.md, "Errors in the browser"): a browser asking for a page
 * (`Accept: text/html`) gets a styled page with the error's status and headers, wherever the error
 * happened; programs keep the JSON error shape. The resource API and the client endpoints always
 * answer JSON, whatever they are asked to accept.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../errors.js';
import { currentSession, knownSession } from './session.js';
import { homeLink, sendErrorPage } from './views.js';

const PROGRAM_PATHS = /^\/(v1(\/|$)|oauth2\/(token|revoke|introspect)\/?$)/;

/** Whether the Accept header names text/html among its media ranges (RFC 9110 §12.5.1). */
function acceptsHtml(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === 'text/html');
}

export function wantsPage(request: FastifyRequest): boolean {
  return acceptsHtml(request.headers.accept) && !PROGRAM_PATHS.test(request.url.split('?')[0]!);
}

/**
 * No route has this address: the page is shown with the signed-in header when there is a session
 * (looked up here, as no route did); without the database, it is shown as to someone signed out.
 */
export async function sendNotFoundPage(reply: FastifyReply, request: FastifyRequest, error: ApiError): Promise<FastifyReply> {
  await currentSession(request).catch(() => null);
  return sendErrorAsPage(reply, request, error);
}

export function sendErrorAsPage(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  reply.headers(error.headers);
  const path = request.url.split('?')[0]!;
  // The session only when a route looked it up already: an error page makes no query of its own.
  const home = homeLink(knownSession(request) !== null);
  switch (error.error) {
    case 'not_found':
      return sendErrorPage(reply, 404, 'Page not found', `There is no page at ${path.slice(0, 200)}.`, home);
    case 'rate_limited': {
      const wait = error.headers['retry-after'] ?? reply.getHeader('retry-after');
      const signIn = /^\/(login|signup)\/?$/.test(path);
      return sendErrorPage(
        reply,
        429,
        'Too many attempts',
        `Please wait ${waitWords(wait === undefined ? undefined : Number(wait))}, then try again.`,
        signIn ? { href: path, label: 'Back to the form' } : home,
      );
    }
    case 'temporarily_unavailable':
      return sendErrorPage(reply, 503, 'Stride is temporarily unavailable', 'Please try again in a few seconds.', home);
    default:
      return sendErrorPage(reply, error.status, 'This request cannot be completed', error.description, home);
  }
}

/** A wait of Retry-After seconds in words a person reads: minutes from a minute up. */
function waitWords(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds <= 60) return seconds && seconds > 1 && seconds < 60 ? `${seconds} seconds` : 'a minute';
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}
