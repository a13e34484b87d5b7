/**
 * The page a password reset link opens (docs/operations.md, "A forgotten password"): a new
 * password, checked as at sign-up; the link then no longer works, and every session of the account
 * has ended. Posting counts as a sign-in attempt (RATE_LIMIT_LOGIN), so links cannot be guessed
 * faster than passwords — not that 256 random bits could be.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { RESET_PATH, resetPassword } from '../../domain/password-resets.js';
import { ApiError } from '../../errors.js';
import { rateLimitConfig } from '../../http/rate-limit.js';
import { PASSWORD_MIN_LENGTH } from '../../security/passwords.js';
import { hashCredential } from '../../security/secrets.js';
import type { ResetOutcome } from '../../store/password-resets.js';
import { CSRF_FIELD, isValidPreSessionCsrf, preSessionCsrfToken } from '../csrf.js';
import { sendErrorPage, sendPage } from '../views.js';

type Form = Record<string, unknown>;
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The sign-in page's `reset` word once a new password is set (login.ts). */
export const PASSWORD_RESET_DONE = '1';

const ASK_AGAIN = 'Ask for a new link: from the sign-in page ("Forgot your password?"), or from whoever runs this Stride server.';

function sendUnusable(reply: FastifyReply, state: Exclude<ResetOutcome, 'set'>) {
  if (state === 'expired') return sendErrorPage(reply, 410, 'This link has expired', `A link to set a new password works for one hour. ${ASK_AGAIN}`);
  if (state === 'used') return sendErrorPage(reply, 410, 'This link was already used', `A link to set a new password works once. If you did not use it, ${ASK_AGAIN.charAt(0).toLowerCase()}${ASK_AGAIN.slice(1)}`);
  return sendErrorPage(reply, 404, 'This link is not valid', `It may have been copied only in part. ${ASK_AGAIN}`);
}

export async function passwordResetPages(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;

  async function showForm(reply: FastifyReply, request: Parameters<typeof preSessionCsrfToken>[0], token: string, userId: string, error: string | null) {
    const user = await stores.users.findById(userId);
    if (!user) return sendUnusable(reply, 'unknown');
    return sendPage(reply, './password-reset', {
      title: 'Set a new password',
      csrfToken: await preSessionCsrfToken(request, reply),
      token,
      email: user.email,
      minLength: PASSWORD_MIN_LENGTH,
      error,
    }, error === null ? 200 : 400);
  }

  app.get(RESET_PATH, async (request, reply) => {
    const token = text((request.query as Form).token);
    const found = await stores.passwordResets.find(hashCredential(token), clock());
    if (found.state !== 'usable') return sendUnusable(reply, found.state);
    // Kept out of other sites' logs: the page's own links and forms carry no token.
    reply.header('referrer-policy', 'no-referrer');
    return showForm(reply, request, token, found.userId, null);
  });

  app.post(RESET_PATH, { config: rateLimitConfig(app.ctx.config.rateLimits.login, 'login') }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    if (!(await isValidPreSessionCsrf(request, form[CSRF_FIELD]))) {
      return sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page. Open the link again and try again.');
    }
    const token = text(form.token);
    let outcome: ResetOutcome;
    try {
      outcome = await resetPassword(stores.passwordResets, clock, token, text(form.password));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const found = await stores.passwordResets.find(hashCredential(token), clock());
      if (found.state !== 'usable') return sendUnusable(reply, found.state);
      return showForm(reply, request, token, found.userId, error.message);
    }
    if (outcome !== 'set') return sendUnusable(reply, outcome);
    return reply.redirect(`/login?reset=${PASSWORD_RESET_DONE}`, 303);
  });
}
