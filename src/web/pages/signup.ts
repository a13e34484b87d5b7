/** Sign-up (SPEC table of faces: `/signup`). A new account is signed in at once. */
import type { FastifyInstance } from 'fastify';
import { rateLimitConfig } from '../../http/rate-limit.js';
import { ApiError } from '../../errors.js';
import { createAccount, DuplicateEmailError } from '../../domain/users.js';
import { PASSWORD_MIN_LENGTH } from '../../security/passwords.js';
import { CSRF_FIELD, isValidPreSessionCsrf, preSessionCsrfToken } from '../csrf.js';
import { currentSession, safeReturnTo, startSession } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';

type Form = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export async function signupPages(app: FastifyInstance): Promise<void> {
  app.get('/signup', async (request, reply) => {
    const returnTo = safeReturnTo((request.query as Form).return_to);
    if (await currentSession(request)) return reply.redirect(returnTo, 302);
    return sendPage(reply, './signup', {
      title: 'Create an account',
      csrfToken: preSessionCsrfToken(request, reply),
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
    if (!isValidPreSessionCsrf(request, form[CSRF_FIELD])) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page. Reload the sign-up page and try again.');
    }
    const email = text(form.email).trim();
    const displayName = text(form.display_name).trim();
    try {
      const user = await createAccount(app.ctx.db.kysely, app.ctx.clock, {
        email,
        password: text(form.password),
        ...(displayName !== '' && { displayName }),
      });
      await startSession(request, reply, user);
      return reply.redirect(returnTo, 303);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const message = error instanceof DuplicateEmailError
        ? 'An account with this email already exists. Sign in instead.'
        : error.description;
      return sendPage(reply, './signup', {
        title: 'Create an account',
        csrfToken: preSessionCsrfToken(request, reply),
        returnTo,
        email,
        displayName,
        minLength: PASSWORD_MIN_LENGTH,
        error: message,
      }, error.status);
    }
  });
}
