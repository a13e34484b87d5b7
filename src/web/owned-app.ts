/**
 * The pages of one app on the dashboard (`/dashboard/apps/:clientId/…`: its settings, secret,
 * deletion, webhooks) share one check, made before any of their handlers runs: the visitor is
 * signed in — for a form, with the form's CSRF token, else the form's page gets it back as a draft
 * (signed-in.ts) — and owns the app the address names. Anyone else gets the same 404 page whether the
 * app exists or not. The handlers read the session and the app from `request.owned`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../store/apps.js';
import type { Session } from './session.js';
import { checkSession } from './signed-in.js';
import { sendErrorPage } from './views.js';

export interface OwnedApp {
  session: Session;
  app: App;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the app scope's check (ownedAppScope) for the routes inside it. */
    owned: OwnedApp | null;
  }
}

/** The one address of an app's page on the dashboard; every other page of the app is under it. */
export function appPath(app: Pick<App, 'clientId'>): string {
  return `/dashboard/apps/${encodeURIComponent(app.clientId)}`;
}

/** The page one level up from `path`: where a button's form is, for the routes named after the button. */
export const pageAbove = (path: string): string => path.replace(/\/[^/]*$/, '');

const NOT_FOUND = { title: 'App not found', message: 'There is no app with this client id among your apps.' };
const BACK_TO_APPS = { href: '/dashboard', label: 'Back to your apps' };

/**
 * Registers `pages` under `/dashboard/apps/:clientId`, behind the check. Their routes are written
 * relative to the app's address (`/`, `/secret`, `/webhooks/:id`).
 */
export async function ownedAppScope(app: FastifyInstance, pages: Array<(scope: FastifyInstance) => Promise<void>>): Promise<void> {
  await app.register(
    async (scope) => {
      scope.decorateRequest('owned', null);
      scope.addHook('preHandler', findOwnedApp);
      for (const register of pages) await scope.register(register);
    },
    { prefix: '/dashboard/apps/:clientId' },
  );
}

async function findOwnedApp(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const session = await checkSession(request, reply);
  if (!session) return reply;
  const { clientId } = request.params as { clientId: string };
  const found = await request.server.ctx.stores.apps.findByClientId(clientId);
  // The same answer for "no such app" and "someone else's app": neither reveals anything.
  if (!found || found.ownerId !== session.user.id) return sendErrorPage(reply, 404, NOT_FOUND.title, NOT_FOUND.message, BACK_TO_APPS);
  request.owned = { session, app: found };
  return undefined;
}

/** The session and the app of a route in the app scope (the check has run). */
export function ownedBy(request: FastifyRequest): OwnedApp {
  if (!request.owned) throw new Error(`${request.url} is not a route of the app scope`);
  return request.owned;
}
