/**
 * Sign-up (`/signup`). The answer does not say whether the email already had
 * an account: both cases spend one Argon2id hash and go on to the sign-in page with the same
 * notice, where the person signs in with the password just chosen (docs/web.md).
 */
import type { FastifyInstance } from 'fastify';
import { rateLimitConfig } from '../../http/rate-limit.js';
import { ApiError } from '../../errors.js';
import { createAccountIfFree } from '../../domain/users.js';
import { PASSWORD_MIN_LENGTH } from '../../security/passwords.js';
import { CSRF_FIELD, isValidPreSessionCsrf, preSessionCsrfToken } from '../csrf.js';
import { currentSession, safeReturnTo } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';

type Form = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export async function signupPages(app: FastifyInstance): Promise<void> {
  app.get('/signup', async (request, reply) => {
    const returnTo = safeReturnTo((request.query as Form).return_to);
    if (await currentSession(request)) return reply.redirect(returnTo, 302);
    return sendPage(reply, './signup', {
      title: 'Create an account',
      csrfToken: await preSessionCsrfToken(request, reply),
      returnTo,
      email: '',
      displayName: '',
      minLength: PASSWORD_MIN_LENGTH,
      error: null,
    });
  });

  // Sign-ups share the sign-in counter: both try passwords or probe emails.
  app.post('/signup', { config: rateLimitConfig(app.ctx.config.rateLimits.login, 'login') }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const returnTo = safeReturnTo(form.return_to);
    if (!(await isValidPreSessionCsrf(request, form[CSRF_FIELD]))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page. Reload the sign-up page and try again.');
    }
    const email = text(form.email).trim();
    const displayName = text(form.display_name).trim();
    try {
      await createAccountIfFree(app.ctx.stores.users, app.ctx.clock, {
        email,
        password: text(form.password),
        ...(displayName !== '' && { displayName }),
      });
    } catch (error) {
      // Invalid input: the same answer whether or not the email has an account.
      if (!(error instanceof ApiError)) throw error;
      return sendPage(reply, './signup', {
        title: 'Create an account',
        csrfToken: await preSessionCsrfToken(request, reply),
        returnTo,
        email,
        displayName,
        minLength: PASSWORD_MIN_LENGTH,
        error: error.description,
      }, error.status);
    }
    // Created, or the email was taken: one answer for both (no session yet, the same place).
    return reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}&signed_up=1`, 303);
  });
}
