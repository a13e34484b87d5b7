/**
 * The "Forgot your password?" mail (docs/operations.md, "A forgotten password"), sent with
 * nodemailer through SMTP_URL. The page answers before any of this runs, and the same way whether
 * or not an account has the address: looking the account up, making the link and sending it happen
 * afterwards, so neither the answer nor its timing says whether an account exists. A mail that
 * cannot be sent is logged — without the link, which would let a log reader take the account — and
 * nothing else happens.
 */
import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';
import type { Clock } from '../clock.js';
import type { SmtpConfig } from '../config.js';
import { createResetLink, RESET_LINK_SECONDS } from '../domain/password-resets.js';
import { isTestPerson } from '../domain/test-people.js';
import type { PasswordResetStore } from '../store/password-resets.js';
import type { UserStore } from '../store/users.js';

export interface ResetMailer {
  /** Starts sending a link to `email` if an account uses it; returns at once. */
  request(email: string): void;
  /** Waits for the mails being sent (at shutdown). */
  settled(): Promise<void>;
}

interface Needs {
  smtp: SmtpConfig;
  publicUrl: string;
  users: UserStore;
  resets: PasswordResetStore;
  clock: Clock;
  log: FastifyBaseLogger;
}

export function resetMailer({ smtp, publicUrl, users, resets, clock, log }: Needs): ResetMailer {
  // nodemailer waits minutes by default; a server that does not answer in seconds is down, and a
  // mail still pending holds the server's shutdown (settled()).
  const transport = nodemailer.createTransport({ url: smtp.url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  const pending = new Set<Promise<void>>();

  async function send(email: string): Promise<void> {
    const user = await users.findByEmail(email);
    // A test person has no password to sign in with (docs/decisions/0024-test-people.md).
    if (!user || isTestPerson(user)) return;
    const { url } = await createResetLink(resets, clock, publicUrl, user);
    await transport.sendMail({
      from: smtp.from,
      to: user.email,
      subject: 'Set a new Stride password',
      text: [
        `Someone (we hope you) asked for a link to set a new password for the Stride account of ${user.email}.`,
        '',
        'Open this link to choose a new password. It works once, for one hour; setting a password signs the account out everywhere.',
        '',
        url,
        '',
        'If you did not ask for it, ignore this mail: your password stays as it is.',
      ].join('\n'),
    });
    log.info({ expiresInSeconds: RESET_LINK_SECONDS }, 'password reset mail sent');
  }

  return {
    request(email) {
      const sending = send(email)
        // The error's message may quote the SMTP conversation, never the link; the link is not logged.
        .catch((error: unknown) => log.error({ err: error instanceof Error ? { message: error.message, code: (error as { code?: unknown }).code } : String(error) }, 'a password reset mail could not be sent'))
        .finally(() => pending.delete(sending));
      pending.add(sending);
    },
    async settled() {
      await Promise.all([...pending]);
    },
  };
}
