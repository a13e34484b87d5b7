/**
 * "Forgot your password?" when SMTP_URL is set (docs/operations.md, "A forgotten password"): a form
 * asking for the email, answered the same way whether or not an account uses it; the link is made
 * and mailed afterwards (reset-mail.ts), so neither the answer nor its time tells accounts apart.
 * Limited as sign-in is: per client address with RATE_LIMIT_LOGIN (the same counter as sign-in),
 * and per email with RATE_LIMIT_LOGIN_ACCOUNT, counting every request (whether it found an account
 * is not known to the page), so nobody fills a mailbox with links. Without SMTP_URL there is no
 * such page: the sign-in page says whom to ask.
 */
import type { FastifyInstance } from 'fastify';
import { isEmailSyntax } from '../../domain/users.js';
import { keyedRateLimit, rateLimitConfig, refuseWhenExceeded } from '../../http/rate-limit.js';
import { CSRF_FIELD, isValidPreSessionCsrf, preSessionCsrfToken } from '../csrf.js';
import { signInLogin } from '../device-cookie.js';
import { resetMailer } from '../reset-mail.js';
import { sendErrorPage, sendPage } from '../views.js';

export const FORGOT_PATH = '/forgot-password';

type Form = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export async function forgotPasswordPages(app: FastifyInstance): Promise<void> {
  const { config, stores, clock } = app.ctx;
  if (config.smtp === undefined) return;
  const mailer = resetMailer({ smtp: config.smtp, publicUrl: config.publicUrl, users: stores.users, resets: stores.passwordResets, clock, log: app.log });
  app.addHook('onClose', () => mailer.settled());
  const perEmail = keyedRateLimit(app, config.rateLimits.loginAccount, 'reset-email');

  app.get(FORGOT_PATH, async (request, reply) =>
    sendPage(reply, './forgot-password', { title: 'Forgot your password?', csrfToken: await preSessionCsrfToken(request, reply), email: '', sent: false }));

  app.post(FORGOT_PATH, { config: rateLimitConfig(config.rateLimits.login, 'login') }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    if (!(await isValidPreSessionCsrf(request, form[CSRF_FIELD]))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page. Reload the page and try again.');
    }
    const email = signInLogin(text(form.email));
    if (perEmail) refuseWhenExceeded(await perEmail(request, email), 'too many links asked for this email address');
    sendPage(reply, './forgot-password', { title: 'Forgot your password?', csrfToken: await preSessionCsrfToken(request, reply), email, sent: true });
    // After the answer is on its way: nothing of the account's lookup or the mail delays it.
    if (isEmailSyntax(email)) setImmediate(() => mailer.request(email));
    return reply;
  });
}
