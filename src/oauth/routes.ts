/**
 * The routes of the authorization server (SPEC §3): RFC 8414 metadata and authorize (GET shows
 * login or consent, POST receives the consent decision), which read the browser's session; and
 * the client endpoints — token, revoke, introspect. Protocol decisions live in the plain modules
 * next to this file; this one only speaks HTTP.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { redirectHost } from './redirect-uri.js';
import { parseScopeString } from './scopes.js';
import { sendErrorPage } from '../web/views.js';
import { currentSession } from '../web/session.js';
import { isValidSessionCsrf } from '../web/csrf.js';
import { renderConsent } from '../web/pages/consent.js';
import { rateLimitConfig } from '../http/rate-limit.js';
import { useApiSecurityHeaders } from '../http/security-headers.js';
import {
  approveAuthorization,
  checkAuthorizationRequest,
  consentIsRemembered,
  deniedRedirect,
  developerName,
  errorRedirectIsVetted,
  findUserGrant,
  grantCoversRequest,
  reissueAuthorization,
  singleValues,
  type AuthorizationRefusal,
} from './authorize.js';
import { authenticateClient } from './client-auth.js';
import { NO_STORE_HEADERS } from './issue-tokens.js';
import { introspectToken } from './introspection.js';
import { authorizationServerMetadata } from './metadata.js';
import { revokeToken } from './revocation.js';
import { exchange, formParameters } from './token.js';

export async function oauthRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;

  app.get('/.well-known/oauth-authorization-server', async () => authorizationServerMetadata(ctx.config));

  // RFC 6749 §4.1.1; SPEC §3.1.
  app.get('/oauth2/authorize', async (request, reply) => {
    const { params, repeated } = singleValues(request.query);
    const check = await checkAuthorizationRequest(ctx, params, repeated);
    if (!check.ok) return sendRefusal(request, reply, check, 302);
    const session = await currentSession(request);
    if (!session) return reply.redirect(`/login?return_to=${encodeURIComponent(request.url)}`, 302);
    const grant = await findUserGrant(ctx, session.user.id, check.request.app.id);
    if (grant && consentIsRemembered(grant, check.request)) {
      return reply.redirect(await reissueAuthorization(ctx, check.request, session.user.id, grant), 302);
    }
    const grantedBefore = grantCoversRequest(grant, check.request);
    return renderConsent(reply, session, check.request, await developerName(ctx, check.request.app), grantedBefore);
  });

  // The consent decision. Every parameter is validated again: the form is user-controlled input.
  app.post('/oauth2/authorize', async (request, reply) => {
    const { params, repeated } = singleValues(request.body);
    const session = await currentSession(request);
    if (!session) return sendErrorPage(reply, 403, 'Signed out', 'Your session has ended. Start again from the app.');
    if (!isValidSessionCsrf(session, params.csrf_token)) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page (missing or wrong CSRF token).');
    }
    const fields = { ...params };
    delete fields.csrf_token;
    delete fields.decision;
    const check = await checkAuthorizationRequest(ctx, fields, repeated.filter((name) => name !== 'granted_scope'));
    if (!check.ok) return sendRefusal(request, reply, check, 303);
    // The person's own answer on the consent page: it goes back to the app (RFC 6749 §4.1.2.1).
    if (params.decision !== 'allow') return reply.redirect(deniedRedirect(ctx, check.request, 'the user denied access'), 303);
    const ticked = new Set(grantedScopes(request.body));
    const granted = check.request.scopes.filter((scope) => ticked.has(scope));
    // Unticking every scope is the same as Deny.
    if (granted.length === 0) return reply.redirect(deniedRedirect(ctx, check.request, 'the user granted no scope'), 303);
    return reply.redirect(await approveAuthorization(ctx, check.request, session.user.id, granted), 303);
  });

  /**
   * A request that cannot go on. Without a trustworthy redirect URI: the error page. Otherwise the
   * error goes back to the app at once only when a person has vetted it (errorRedirectIsVetted,
   * RFC 9700 §4.11.2); else the error page describes it and offers the way back as a link.
   */
  async function sendRefusal(request: FastifyRequest, reply: FastifyReply, check: AuthorizationRefusal, status: 302 | 303): Promise<FastifyReply> {
    if (check.page !== undefined) return authorizationErrorPage(reply, check.page);
    const session = await currentSession(request);
    if (await errorRedirectIsVetted(ctx, session?.user.id, check.app)) return reply.redirect(check.redirectTo, status);
    return sendErrorPage(
      reply,
      400,
      'This authorization request cannot be completed',
      `The request to connect ${check.app.name} has an error: ${check.error} (${check.description}). ` +
        `Anyone can make such a request; go back only if you started it from ${check.app.name}.`,
      { href: check.redirectTo, label: `Return to ${check.app.name} (${redirectHost(check.redirectUri)}) with this error` },
    );
  }
}

/**
 * RFC 6749 §3.2, RFC 7009 §2 and RFC 7662 §2: form-encoded requests from clients, JSON answers.
 * They answer programs, never browsers: the API's header set, and no cookies are read or set.
 */
export async function clientEndpointRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  useApiSecurityHeaders(app);

  app.post('/oauth2/token', { config: rateLimitConfig(ctx.config.rateLimits.token, 'token') }, async (request, reply) => {
    const body = formParameters(request);
    const response = await exchange(ctx, body, request.headers.authorization);
    return reply.headers(NO_STORE_HEADERS).send(response);
  });

  // RFC 7009 §2.
  app.post('/oauth2/revoke', { config: rateLimitConfig(ctx.config.rateLimits.token, 'token') }, async (request, reply) => {
    const body = formParameters(request);
    const client = await authenticateClient(ctx.db, body, request.headers.authorization);
    await revokeToken(ctx, client, body);
    return reply.headers(NO_STORE_HEADERS).code(200).send();
  });

  // RFC 7662 §2.
  app.post('/oauth2/introspect', { config: rateLimitConfig(ctx.config.rateLimits.token, 'token') }, async (request, reply) => {
    const body = formParameters(request);
    const client = await authenticateClient(ctx.db, body, request.headers.authorization);
    return reply.headers(NO_STORE_HEADERS).send(await introspectToken(ctx, client, body));
  });
}

function authorizationErrorPage(reply: FastifyReply, message: string): FastifyReply {
  return sendErrorPage(reply, 400, 'This authorization request cannot be completed', message);
}

/** Ticked checkboxes arrive as one value, several, or none. */
function grantedScopes(body: FastifyRequest['body']): string[] {
  const value = (body as Record<string, unknown> | undefined)?.granted_scope;
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((v): v is string => typeof v === 'string').flatMap(parseScopeString);
}
