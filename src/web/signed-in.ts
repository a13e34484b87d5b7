/**
 * Signed-in pages get their session the way an app's pages do (owned-app.ts): one check made before
 * any handler of the scope runs. A GET without a session is sent to sign in and back; a form (POST)
 * must carry its CSRF token, and without a session goes back to its page (`formPage`) with what
 * was typed kept as a draft (forms.ts). The handlers read the session with sessionOf(request).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requireSession, requireSessionForm } from './forms.js';
import type { Session } from './session.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the signed-in scope's check for the routes inside it. */
    signedIn: Session | null;
  }
  interface FastifyContextConfig {
    /**
     * For a form's route behind the check: the page the form is on, from the request's path and the
     * form, where a person whose session ended comes back after signing in. The request's own path
     * otherwise.
     */
    formPage?: (path: string, form: Record<string, unknown>) => string;
    /** A route of the scope that checks its visitor itself (a page shown signed out, a streamed upload). */
    ownSessionCheck?: boolean;
  }
}

/** The session of a GET, or of a form with its CSRF token; null once the reply is sent (sign-in, or 403). */
export async function checkSession(request: FastifyRequest, reply: FastifyReply): Promise<Session | null> {
  if (request.method === 'GET' || request.method === 'HEAD') return requireSession(request, reply);
  const path = request.url.split('?')[0]!;
  const form = (request.body ?? {}) as Record<string, unknown>;
  return requireSessionForm(request, reply, request.routeOptions.config.formPage?.(path, form) ?? path);
}

/** Registers `pages` behind the check. */
export async function signedInScope(app: FastifyInstance, pages: Array<(scope: FastifyInstance) => Promise<void>>): Promise<void> {
  await app.register(async (scope) => {
    scope.decorateRequest('signedIn', null);
    scope.addHook('preHandler', async (request, reply) => {
      if (request.routeOptions.config.ownSessionCheck) return undefined;
      request.signedIn = await checkSession(request, reply);
      return request.signedIn ? undefined : reply;
    });
    for (const register of pages) await scope.register(register);
  });
}

/** The session of a route in the signed-in scope (the check has run). */
export function sessionOf(request: FastifyRequest): Session {
  if (!request.signedIn) throw new Error(`${request.url} is not a route of the signed-in scope`);
  return request.signedIn;
}

/** The route config of a form that is on `page`, whatever its route's path. */
export const formOn = (page: string) => ({ formPage: () => page });
