/**
 * The password checks of the account pages: changing the password and deleting the account ask
 * for it (docs/web.md, "Your data and sessions"). They are what keeps a stolen session from
 * becoming a stolen account, so each check counts twice:
 * - per client address, in the sign-in attempts' counter (RATE_LIMIT_LOGIN), and
 * - per account, whatever session or address it comes from (RATE_LIMIT_PASSWORD_CHECK, default 5
 *   in 15 minutes), so that guesses spread over many addresses still get that many answers at most.
 * A wrong answer that spends the account's last check ends the session that sent it: whoever holds
 * that session must sign in, with the password, to go on. Beyond the limit nothing is checked (429)
 * until the window ends, from any session of the account.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyedRateLimit, rateLimitConfig, refuseWhenExceeded } from '../http/rate-limit.js';
import { verifyPassword } from '../security/passwords.js';
import { endSession, type Session } from './session.js';

/** The sign-in page's `signed_out` word after a session was ended here (login.ts says why). */
export const PASSWORD_CHECKS_SPENT = 'password';

/** The session ended: the answer was wrong and the account had no check left. */
export type PasswordCheck = 'right' | 'wrong' | 'session-ended';

export function passwordChecks(app: FastifyInstance) {
  const perAccount = keyedRateLimit(app, app.ctx.config.rateLimits.passwordCheck, 'password-check');
  return {
    /** The options of a route that checks a password: the per-address count, before the body is read. */
    routeOptions: { config: rateLimitConfig(app.ctx.config.rateLimits.login, 'login') },

    /** Checks `password` against the session's person, counting the check against their account. */
    async check(request: FastifyRequest, reply: FastifyReply, session: Session, password: string): Promise<PasswordCheck> {
      const spent = perAccount && (await perAccount(request, session.user.id));
      if (spent) refuseWhenExceeded(spent, 'too many password checks for this account');
      if (await verifyPassword(session.user.password_hash, password)) return 'right';
      if (spent && spent.remaining === 0) {
        await endSession(request, reply);
        return 'session-ended';
      }
      return 'wrong';
    },
  };
}
