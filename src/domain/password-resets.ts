/**
 * A way back into an account whose password is forgotten (docs/operations.md, "A forgotten
 * password"): a single-use link, valid one hour, made by the operator (`stride users reset-link`)
 * or sent by email when SMTP_URL is set. Using it sets a new password and ends every session.
 */
import type { Clock } from '../clock.js';
import { invalidRequest } from '../errors.js';
import { hashPassword } from '../security/passwords.js';
import { hashCredential, newCredential } from '../security/secrets.js';
import type { PasswordResetStore, ResetOutcome } from '../store/password-resets.js';
import type { User } from '../store/users.js';
import { passwordProblem } from './users.js';

export const RESET_LINK_SECONDS = 3600;

/** The page a link opens; its token is a query parameter the access log redacts (`token`). */
export const RESET_PATH = '/password-reset';

/** A new link for `user`, on the server at `publicUrl`. */
export async function createResetLink(resets: PasswordResetStore, clock: Clock, publicUrl: string, user: User): Promise<{ url: string; expiresAt: number }> {
  // A test person has no password to sign in with (docs/decisions/0024-test-people.md).
  if (user.test_person_owner_id !== null) throw invalidRequest(`${user.email} is a test person: test people cannot sign in, so they have no password`);
  const token = newCredential('passwordReset');
  const now = clock();
  const expiresAt = now + RESET_LINK_SECONDS;
  await resets.create({ tokenHash: hashCredential(token), userId: user.id, expiresAt, now });
  return { url: `${publicUrl}${RESET_PATH}?token=${encodeURIComponent(token)}`, expiresAt };
}

/** Sets `password` through the link of `token`; a problem with the password is thrown, the link's state returned. */
export async function resetPassword(resets: PasswordResetStore, clock: Clock, token: string, password: string): Promise<ResetOutcome> {
  const problem = passwordProblem(password);
  if (problem !== null) throw invalidRequest(problem);
  return resets.use(hashCredential(token), await hashPassword(password), clock());
}
