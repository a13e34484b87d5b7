/**
 * Sign-up (`/signup`). The answer does not say whether the email already had
 * an account: both cases spend one Argon2id hash and go on to the sign-in page with the same
 * notice, where the person signs in with the password just chosen (docs/web.md). A form with
 * mistakes comes back with every field's problem in plain words, next to that field.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimitConfig } from '../../http/rate-limit.js';
import { ApiError } from '../../errors.js';
import { readsAsServiceName } from '../../domain/reserved-names.js';
import { createAccountIfFree, defaultDisplayNameProblem, DISPLAY_NAME_MAX_LENGTH, displayNameProblem, isEmailSyntax } from '../../domain/users.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../security/passwords.js';
import { CSRF_FIELD, isValidPreSessionCsrf, preSessionCsrfToken } from '../csrf.js';
import { currentSession, safeReturnTo } from '../session.js';
import { keepSignedUpEmail } from '../signed-up-email.js';
import { sendErrorPage, sendPage } from '../views.js';
import { appAsking } from './asking-app.js';

type Form = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

interface SignUpForm {
  email: string;
  displayName: string;
  password: string;
}
type SignUpErrors = Partial<Record<'email' | 'displayName' | 'password', string>>;

/**
 * Every field's problem, in the words of the page (not the API's): the same rules as
 * createAccountIfFree, which checks them again. The name is optional; left empty, the email's
 * first part is used.
 */
export function signUpErrors(form: SignUpForm): SignUpErrors {
  const errors: SignUpErrors = {};
  if (form.email === '') errors.email = 'Enter your email address.';
  else if (!isEmailSyntax(form.email)) errors.email = 'Enter an email address like name@example.com.';
  if (form.password.length < PASSWORD_MIN_LENGTH) {
    errors.password = form.password === '' ? `Choose a password of at least ${PASSWORD_MIN_LENGTH} characters.` : `Your password is ${form.password.length} characters long: it needs at least ${PASSWORD_MIN_LENGTH}.`;
  } else if (form.password.length > PASSWORD_MAX_LENGTH) {
    errors.password = `Your password is too long: at most ${PASSWORD_MAX_LENGTH} characters.`;
  }
  if (form.displayName === '' && isEmailSyntax(form.email) && defaultDisplayNameProblem(form.email) !== null) {
    errors.displayName = 'Enter your name: the first part of your email reads as “Stride”, the name of this service, which others would see as your name.';
  } else if (form.displayName !== '' && readsAsServiceName(form.displayName)) {
    errors.displayName = '“Stride” is the name of this service: choose a name that does not read as it.';
  } else if (form.displayName !== '' && displayNameProblem(form.displayName) !== null) {
    errors.displayName = [...form.displayName].length > DISPLAY_NAME_MAX_LENGTH
      ? `Your name can be at most ${DISPLAY_NAME_MAX_LENGTH} characters long.`
      : 'Your name has characters that cannot be shown (control or direction-changing characters). Please type it again.';
  }
  return errors;
}

export async function signupPages(app: FastifyInstance): Promise<void> {
  async function sendForm(request: FastifyRequest, reply: FastifyReply, returnTo: string, form: Omit<SignUpForm, 'password'>, errors: SignUpErrors, status = 200) {
    return sendPage(reply, './signup', {
      title: 'Create an account',
      csrfToken: await preSessionCsrfToken(request, reply),
      returnTo,
      asking: await appAsking(app.ctx, returnTo),
      email: form.email,
      displayName: form.displayName,
      minLength: PASSWORD_MIN_LENGTH,
      errors,
    }, status);
  }

  app.get('/signup', async (request, reply) => {
    const returnTo = safeReturnTo((request.query as Form).return_to);
    if (await currentSession(request)) return reply.redirect(returnTo, 302);
    return sendForm(request, reply, returnTo, { email: '', displayName: '' }, {});
  });

  // Sign-ups share the sign-in counter: both try passwords or probe emails.
  app.post('/signup', { config: rateLimitConfig(app.ctx.config.rateLimits.login, 'login') }, async (request, reply) => {
    const body = (request.body ?? {}) as Form;
    const returnTo = safeReturnTo(body.return_to);
    if (!(await isValidPreSessionCsrf(request, body[CSRF_FIELD]))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page. Reload the sign-up page and try again.', { href: `/signup?return_to=${encodeURIComponent(returnTo)}`, label: 'Back to the sign-up page' });
    }
    const form = { email: text(body.email).trim(), displayName: text(body.display_name).trim(), password: text(body.password) };
    // Invalid input: the same answer whether or not the email has an account.
    const errors = signUpErrors(form);
    if (Object.keys(errors).length > 0) return sendForm(request, reply, returnTo, form, errors, 400);
    try {
      await createAccountIfFree(app.ctx.stores.users, app.ctx.clock, {
        email: form.email,
        password: form.password,
        ...(form.displayName !== '' && { displayName: form.displayName }),
      });
    } catch (error) {
      // A rule signUpErrors does not know (it should know them all): said as the domain says it.
      if (!(error instanceof ApiError)) throw error;
      return sendForm(request, reply, returnTo, form, { email: error.description }, error.status);
    }
    // Created, or the email was taken: one answer for both (no session yet, the same place).
    await keepSignedUpEmail(request, reply, form.email);
    return reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}&signed_up=1`, 303);
  });
}
