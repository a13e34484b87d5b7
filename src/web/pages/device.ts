/**
 * The verification page of the device authorization grant (RFC 8628 §3.3, docs/oauth.md "Device
 * authorization"): a signed-in person types the user code shown on a device, sees the app's
 * consent page and allows or denies. Looking a code up is rate-limited per client address and per
 * account (RATE_LIMIT_LOGIN), per code (RATE_LIMIT_LOGIN_ACCOUNT), and over the whole server
 * (RATE_LIMIT_DEVICE_CODES): the codes are short enough to be typed, so guessing must stay slow
 * however many addresses it comes from (RFC 8628 §5.1). Only a signed-in person's form with its
 * CSRF token counts against the account, code and server budgets, so that strangers cannot spend
 * the shared one and keep everyone from connecting a device.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { approveDeviceRequest, denyDeviceRequest, findPendingDeviceRequest, normalizeUserCode } from '../../oauth/device-authorization.js';
import { developerName } from '../../oauth/authorize.js';
import { parseScopeString } from '../../domain/scopes.js';
import { keyedRateLimit, rateLimitConfig, refuseWhenExceeded } from '../../http/rate-limit.js';
import { CSRF_FIELD, isValidSessionCsrf, sessionCsrfToken } from '../csrf.js';
import { currentSession, type Session } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';
import { renderDeviceConsent } from './consent.js';

type Form = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export const UNKNOWN_CODE_MESSAGE = 'That code is not right, or it has expired. Check the code on your device, or start again there for a new one.';

export async function devicePages(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;

  function sendCodeForm(reply: FastifyReply, session: Session, options: { userCode?: string; error?: string; notice?: string; showForm?: boolean }, status = 200) {
    return sendPage(reply, './device', {
      title: 'Connect a device',
      userName: session.user.display_name,
      csrfToken: sessionCsrfToken(session),
      userEmail: session.user.email,
      userCode: options.userCode ?? '',
      error: options.error ?? null,
      notice: options.notice ?? null,
      showForm: options.showForm ?? true,
    }, status);
  }

  /** Signed in and the form's CSRF token right, or the page that says why not. */
  async function signedInForm(request: FastifyRequest, reply: FastifyReply): Promise<Session | null> {
    const session = await currentSession(request);
    if (!session) {
      await sendErrorPage(reply, 403, 'Signed out', 'Your session ended before you answered, so nothing was shared. Sign in again and type the code once more.', {
        href: `/login?return_to=${encodeURIComponent('/device')}`,
        label: 'Sign in again',
      });
      return null;
    }
    if (!isValidSessionCsrf(session, (request.body as Form | undefined)?.[CSRF_FIELD])) {
      await sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page (missing or wrong CSRF token).');
      return null;
    }
    return session;
  }

  // Per account and per code, whatever address the attempts come from (the per-address limit is
  // the route's).
  const perAccount = keyedRateLimit(app, ctx.config.rateLimits.login, 'device-account');
  const perCode = keyedRateLimit(app, ctx.config.rateLimits.loginAccount, 'device-code');
  // And every lookup on the server together (RATE_LIMIT_DEVICE_CODES): guesses spread over many
  // addresses and codes still find a live code at most at this pace (RFC 8628 §5.1). Counted last,
  // so that an account or a code past its own limit spends none of it.
  const overall = keyedRateLimit(app, ctx.config.rateLimits.deviceCodes, 'device-codes');

  /** signedInForm, then the attempt counted: a 429 (thrown) beyond any of the limits. */
  async function signedInAttempt(request: FastifyRequest, reply: FastifyReply): Promise<Session | null> {
    const session = await signedInForm(request, reply);
    if (!session) return null;
    if (perAccount) refuseWhenExceeded(await perAccount(request, session.user.id), 'too many codes tried by this account');
    if (perCode) {
      const typed = text((request.body as Form | undefined)?.user_code);
      refuseWhenExceeded(await perCode(request, normalizeUserCode(typed) ?? typed.slice(0, 40)), 'too many attempts for this code');
    }
    if (overall) refuseWhenExceeded(await overall(request, 'all'), 'too many device codes are being tried on this server');
    return session;
  }
  const limitedPerAddress = { config: rateLimitConfig(ctx.config.rateLimits.login, 'device') };

  // The verification_uri, and with ?user_code= the verification_uri_complete (RFC 8628 §3.3.1).
  app.get('/device', async (request, reply) => {
    const userCode = text((request.query as Form).user_code).slice(0, 20);
    const session = await currentSession(request);
    if (!session) {
      const back = userCode === '' ? '/device' : `/device?user_code=${encodeURIComponent(userCode)}`;
      return reply.redirect(`/login?return_to=${encodeURIComponent(back)}`, 302);
    }
    return sendCodeForm(reply, session, { userCode });
  });

  // The typed code: the app's consent page when it names a pending request.
  app.post('/device', limitedPerAddress, async (request, reply) => {
    const session = await signedInAttempt(request, reply);
    if (!session) return reply;
    const typed = text((request.body as Form).user_code);
    const pending = await findPendingDeviceRequest(ctx, typed);
    if (!pending) return sendCodeForm(reply, session, { userCode: typed.slice(0, 20), error: UNKNOWN_CODE_MESSAGE }, 400);
    return renderDeviceConsent(reply, session, pending, await developerName(ctx, pending.app));
  });

  // The decision. The code is looked up again: the form is user-controlled input.
  app.post('/device/consent', limitedPerAddress, async (request, reply) => {
    const session = await signedInAttempt(request, reply);
    if (!session) return reply;
    const form = request.body as Form;
    const pending = await findPendingDeviceRequest(ctx, text(form.user_code));
    if (!pending) return sendCodeForm(reply, session, { error: UNKNOWN_CODE_MESSAGE }, 400);
    const granted = grantedScopes(form);
    // Unticking every scope is the same as Deny.
    if (form.decision !== 'allow' || granted.length === 0) {
      await denyDeviceRequest(ctx, pending);
      return sendCodeForm(reply, session, { notice: `You denied ${pending.app.name}: nothing was shared. You can close this page.`, showForm: false });
    }
    if (!(await approveDeviceRequest(ctx, pending, session.user.id, granted))) {
      return sendCodeForm(reply, session, { error: UNKNOWN_CODE_MESSAGE }, 400);
    }
    return sendCodeForm(reply, session, { notice: `${pending.app.name} is connected. Go back to your device: it continues by itself.`, showForm: false });
  });
}

/** Ticked checkboxes arrive as one value, several, or none. */
function grantedScopes(form: Form): string[] {
  const value = form.granted_scope;
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((v): v is string => typeof v === 'string').flatMap(parseScopeString);
}
