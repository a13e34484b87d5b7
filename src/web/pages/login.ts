/**
 * Sign-in and sign-out (docs/web.md, docs/SECURITY.md). A failed sign-in says the same thing, and
 * takes the same time, whether or not the email has an account. Sign-in attempts are rate-limited
 * per client address, and per email address whatever address they come from
 * (RATE_LIMIT_LOGIN_ACCOUNT, README) — except from a browser that signed in as that email before,
 * which counts on its own (device cookies, sign-in-limit.ts).
 */
import type { FastifyInstance } from 'fastify';
import { rateLimitConfig } from '../../http/rate-limit.js';
import { verifyAgainstDummy, verifyPassword } from '../../security/passwords.js';
import { isTestPerson } from '../../domain/test-people.js';
import { isEmailSyntax } from '../../domain/users.js';
import { CSRF_FIELD, isValidPreSessionCsrf, isValidSessionCsrf, preSessionCsrfToken } from '../csrf.js';
import { dropDraftOfOthers } from '../form-drafts.js';
import { issueDeviceCookie } from '../device-cookie.js';
import { PASSWORD_CHECKS_SPENT } from '../password-checks.js';
import { signInAccountLimit } from '../sign-in-limit.js';
import { forgetSignedUpEmail, signedUpEmail } from '../signed-up-email.js';
import { currentSession, endSession, safeReturnTo, startSession } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';
import { appAsking } from './asking-app.js';

export const LOGIN_FAILED_MESSAGE = 'The email or password is not right.';

/** After sign-up: worded for both outcomes, since sign-up does not say which one happened. */
export const SIGNED_UP_NOTICE =
  'Sign in with the email and password you just chose to continue. If this email already had a Stride account, no second one was made: sign in with that account\'s password.';

type Form = Record<string, unknown>;

/** Why the person is on the sign-in page, when they did not come by themselves. */
function loginNotice(query: Form): string | null {
  if (query.signed_up === '1') return SIGNED_UP_NOTICE;
  if (query.reset === '1') return 'Your new password is set, and every session of the account has ended. Sign in with the new password.';
  if (query.signed_out === '1') return 'You are signed out.';
  if (query.signed_out === PASSWORD_CHECKS_SPENT) return 'You are signed out: your current password was not right too many times. Sign in again to go on.';
  if (query.ended === 'kept') return 'Your session ended before the form was sent. Sign in again: you will be back on the form with what you typed, to send it again.';
  if (query.ended === '1') return 'Your session ended before the form was sent. Sign in again to go back to it.';
  return null;
}
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Whether signing in leads on to `/device`, where a device waits for its code to be typed (RFC 8628 §3.3). */
const isDevicePage = (returnTo: string) => returnTo === '/device' || returnTo.startsWith('/device?');

export async function loginPages(app: FastifyInstance): Promise<void> {
  // "Forgot your password?" leads to a form when Stride can send email (forgot-password.ts).
  const mailsResetLinks = app.ctx.config.smtp !== undefined;
  app.get('/login', async (request, reply) => {
    const query = request.query as Form;
    const returnTo = safeReturnTo(query.return_to);
    const session = await currentSession(request);
    if (session) return reply.redirect(returnTo, 302);
    return sendPage(reply, './login', {
      title: 'Sign in',
      csrfToken: await preSessionCsrfToken(request, reply),
      returnTo,
      asking: await appAsking(app.ctx, returnTo),
      email: query.signed_up === '1' ? await signedUpEmail(request) : '',
      error: null,
      notice: loginNotice(query),
      deviceWaiting: isDevicePage(returnTo),
      mailsResetLinks,
    });
  });

  const perAccount = signInAccountLimit(app);
  app.post('/login', {
    config: rateLimitConfig(app.ctx.config.rateLimits.login, 'login'),
    ...(perAccount && { preHandler: perAccount.check }),
  }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const returnTo = safeReturnTo(form.return_to);
    if (!(await isValidPreSessionCsrf(request, form[CSRF_FIELD]))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page. Reload the sign-in page and try again.');
    }
    const email = text(form.email).trim();
    const password = text(form.password);
    const found = isEmailSyntax(email) ? await app.ctx.stores.users.findByEmail(email) : undefined;
    // A test person never signs in (docs/decisions/0024-test-people.md): refused as an unknown
    // email is, after the same dummy check, so that nothing tells their emails apart.
    const user = found && !isTestPerson(found) ? found : undefined;
    const ok = user ? await verifyPassword(user.password_hash, password) : await verifyAgainstDummy(password);
    app.ctx.metrics.signIns.inc({ outcome: user && ok ? 'succeeded' : 'failed' });
    if (!user || !ok) {
      await perAccount?.failed(request);
      return sendPage(reply, './login', {
        title: 'Sign in',
        csrfToken: await preSessionCsrfToken(request, reply),
        returnTo,
        asking: await appAsking(app.ctx, returnTo),
        email,
        error: LOGIN_FAILED_MESSAGE,
        notice: null,
        deviceWaiting: isDevicePage(returnTo),
        mailsResetLinks,
      }, 401);
    }
    await startSession(request, reply, user);
    forgetSignedUpEmail(request, reply);
    await dropDraftOfOthers(request, reply, user);
    await issueDeviceCookie(request, reply, email);
    return reply.redirect(returnTo, 303);
  });

  app.post('/logout', async (request, reply) => {
    const session = await currentSession(request);
    const form = (request.body ?? {}) as Form;
    if (session && !isValidSessionCsrf(session, form[CSRF_FIELD])) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page (missing or wrong CSRF token).');
    }
    await endSession(request, reply);
    return reply.redirect('/login?signed_out=1', 303);
  });
}
