/**
 * The browser side of the authorization endpoint (RFC 6749 §4.1.1, docs/oauth.md): GET sends a
 * signed-out person to sign in, returns at once when consent is remembered, or shows the consent
 * page; POST receives the consent decision. Every protocol decision is a plain function of
 * src/oauth/authorize.ts; this module only connects them to the session, the forms and the pages.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  approveAuthorization,
  checkAuthorizationRequest,
  consentIsRemembered,
  deniedRedirect,
  developerName,
  errorRedirectIsVetted,
  grantCoversRequest,
  reissueAuthorization,
  singleValues,
  type AuthorizationRefusal,
  type AuthorizationRequest,
} from '../../oauth/authorize.js';
import { claimPushedRequest, PUSHED_REQUEST_DECISION_WINDOW } from '../../oauth/pushed-requests.js';
import { redirectHost } from '../../oauth/redirect-uri.js';
import { parseScopeString } from '../../domain/scopes.js';
import { consentChoices, consentingPerson } from '../../domain/test-people.js';
import type { App } from '../../store/apps.js';
import { isValidSessionCsrf } from '../csrf.js';
import { appPath } from '../owned-app.js';
import { currentSession } from '../session.js';
import { homeLink, sendErrorPage, type Link } from '../views.js';
import { CONSENT_AS_FIELD, renderConsent } from './consent.js';

export async function authorizePages(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;

  // RFC 6749 §4.1.1.
  app.get('/oauth2/authorize', async (request, reply) => {
    const { params, repeated } = singleValues(request.query);
    const check = await checkAuthorizationRequest(ctx, params, repeated);
    if (!check.ok) return sendRefusal(request, reply, check, 302);
    const session = await currentSession(request);
    if (!session) return reply.redirect(`/login?return_to=${encodeURIComponent(request.url)}`, 302);
    // A developer with test people always sees the page for their own app: it is where they choose who consents.
    const testPeople = await consentChoices(ctx.stores, session.user, check.request.app);
    const grant = await ctx.stores.grants.find(session.user.id, check.request.app.id);
    if (grant && testPeople.length === 0 && consentIsRemembered(grant, check.request)) {
      if (!(await claimPushed(check.request))) return sendUsedPushedRequest(reply);
      return reply.redirect(await reissueAuthorization(ctx, check.request, session.user.id, grant), 302);
    }
    const grantedBefore = grantCoversRequest(grant, check.request);
    return renderConsent(reply, session, check.request, await developerName(ctx, check.request.app), grantedBefore, testPeople);
  });

  // The consent decision. Every parameter is validated again: the form is user-controlled input.
  app.post('/oauth2/authorize', async (request, reply) => {
    const { params, repeated } = singleValues(request.body);
    const session = await currentSession(request);
    if (!session) {
      // The request's own parameters lead back to the consent page once signed in again.
      const original = Object.fromEntries(Object.entries(params).filter(([name]) => !['csrf_token', 'decision', 'granted_scope'].includes(name)));
      const again = `/oauth2/authorize?${new URLSearchParams(original as Record<string, string>)}`;
      return sendErrorPage(reply, 403, 'Signed out', 'Your session ended before you answered, so nothing was shared. Sign in again to see the request once more.', {
        href: `/login?return_to=${encodeURIComponent(again)}`,
        label: 'Sign in again',
      });
    }
    if (!isValidSessionCsrf(session, params.csrf_token)) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page (missing or wrong CSRF token).');
    }
    const fields = { ...params };
    delete fields.csrf_token;
    delete fields.decision;
    delete fields[CONSENT_AS_FIELD];
    const check = await checkAuthorizationRequest(ctx, fields, repeated.filter((name) => name !== 'granted_scope'), PUSHED_REQUEST_DECISION_WINDOW);
    if (!check.ok) return sendRefusal(request, reply, check, 303);
    // Who consents: the signed-in person, or one of their test people for their own app (test-people.ts).
    const subject = await consentingPerson(ctx.stores, session.user, check.request.app, params[CONSENT_AS_FIELD]);
    if (subject === null) {
      return sendErrorPage(reply, 403, 'Request refused', 'You can answer only as yourself, or as one of your own test people for one of your own apps.');
    }
    if (!(await claimPushed(check.request))) return sendUsedPushedRequest(reply);
    // The person's own answer on the consent page: it goes back to the app (RFC 6749 §4.1.2.1).
    if (params.decision !== 'allow') return reply.redirect(deniedRedirect(ctx, check.request, 'the user denied access'), 303);
    const ticked = new Set(grantedScopes(request.body));
    const granted = check.request.scopes.filter((scope) => ticked.has(scope));
    // Unticking every scope is the same as Deny.
    if (granted.length === 0) return reply.redirect(deniedRedirect(ctx, check.request, 'the user granted no scope'), 303);
    return reply.redirect(await approveAuthorization(ctx, check.request, subject, granted), 303);
  });

  /** A pushed request (RFC 9126 §4) is used once: by the code issued, or the denial, for it. */
  async function claimPushed(authorization: AuthorizationRequest): Promise<boolean> {
    return authorization.pushed === null || claimPushedRequest(ctx, authorization.pushed.requestUriHash);
  }

  function sendUsedPushedRequest(reply: FastifyReply): FastifyReply {
    return sendErrorPage(reply, 400, 'This authorization request cannot be completed', 'The request_uri is unknown, expired or already used (invalid_request_uri).');
  }

  /**
   * A request that cannot go on. Without a trustworthy redirect URI: the error page. Otherwise the
   * error goes back to the app at once only when a person has vetted it (errorRedirectIsVetted,
   * RFC 9700 §4.11.2); else the error page describes it and offers the way back as a link.
   */
  async function sendRefusal(request: FastifyRequest, reply: FastifyReply, check: AuthorizationRefusal, status: 302 | 303): Promise<FastifyReply> {
    const session = await currentSession(request);
    if (check.page !== undefined) {
      return sendErrorPage(reply, 400, 'This authorization request cannot be completed', check.page, await waysOn(session?.user.id, check.app));
    }
    if (await errorRedirectIsVetted(ctx, session?.user.id, check.app)) return reply.redirect(check.redirectTo, status);
    return sendErrorPage(
      reply,
      400,
      'This authorization request cannot be completed',
      `The request to connect ${check.app.name} has an error: ${check.error} (${check.description}). ` +
        `Anyone can make such a request; go back only if you started it from ${check.app.name}.`,
      [{ href: check.redirectTo, label: `Return to ${check.app.name} (${redirectHost(check.redirectUri)}) with this error` }, homeLink(session !== null)],
    );
  }

  /**
   * Where a person goes from a request that cannot go back to the app: the app's own page on the
   * dashboard for its developer (to fix its redirect URIs); the app's website for someone who
   * allowed the app before (errorRedirectIsVetted), as the way back to it; and Stride itself.
   */
  async function waysOn(userId: string | undefined, app: App | undefined): Promise<Link[]> {
    const links: Link[] = [];
    if (app && userId !== undefined) {
      if (app.ownerId === userId) links.push({ href: appPath(app), label: `See the settings of ${app.name} on your dashboard`, id: 'app-settings' });
      else if (app.websiteUrl !== '' && (await errorRedirectIsVetted(ctx, userId, app))) {
        links.push({ href: app.websiteUrl, label: `Back to ${app.name} (${new URL(app.websiteUrl).host})`, id: 'app-website' });
      }
    }
    links.push(homeLink(userId !== undefined));
    return links;
  }
}

/** Ticked checkboxes arrive as one value, several, or none. */
function grantedScopes(body: FastifyRequest['body']): string[] {
  const value = (body as Record<string, unknown> | undefined)?.granted_scope;
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((v): v is string => typeof v === 'string').flatMap(parseScopeString);
}
