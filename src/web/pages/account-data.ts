/**
 * A person's own data and sign-ins, on the account page (docs/web.md, "Your data and sessions"):
 * download everything Stride holds about them, or one kind of their data as CSV (data-exports.ts),
 * see and end their signed-in sessions, change the password (every other session ends), and
 * delete the account.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { concurrencyLimit } from '../../http/concurrency-limit.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../security/passwords.js';
import { profileOf } from '../../domain/profile.js';
import { isoTime, text, type Form } from '../forms.js';
import { formOn, sessionOf } from '../signed-in.js';
import { PASSWORD_CHECKS_SPENT, passwordChecks } from '../password-checks.js';
import { endSession } from '../session.js';
import { sendPage } from '../views.js';
import { exportKinds } from './data-exports.js';

/** Exports of one person streaming at once, per process; more are answered 429 (docs/web.md). */
const EXPORTS_PER_PERSON = 2;
/** What the 429 asks to wait: about what a long export (years of minutes) takes. */
const EXPORT_RETRY_AFTER_SECONDS = 10;

/** A stream of what `chunks` yields, read one chunk ahead of the connection, not sixteen. */
const streamOf = (chunks: AsyncIterable<string>) => Readable.from(chunks, { highWaterMark: 1 });

export async function accountDataPages(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const exports = concurrencyLimit(EXPORTS_PER_PERSON, EXPORT_RETRY_AFTER_SECONDS, 'exports of your data');

  const kinds = exportKinds(stores);

  const attachment = (reply: FastifyReply, type: string, name: string) =>
    reply.header('content-type', type).header('content-disposition', `attachment; filename="${name}"`).header('cache-control', 'no-store');

  app.get('/account/export.json', async (request, reply) => {
    const session = sessionOf(request);
    const userId = session.user.id;
    if (!exports.enter(userId, reply)) return reply;
    const [connected, sessions] = await Promise.all([stores.grants.listConnectedApps(userId), stores.sessions.listLive(userId, clock())]);
    const head = {
      exported_at: isoTime(clock()),
      email: session.user.email,
      profile: profileOf(session.user),
      connected_apps: connected.map((c) => ({ app: c.name, developer: c.developer, scopes: c.scopes, allowed_at: c.grantedAt, last_used_at: c.lastUsedAt === null ? null : Number(c.lastUsedAt) })),
      sessions: sessions.map((s) => ({ device: s.userAgent, address: s.address, signed_in_at: s.createdAt, last_seen_at: s.lastSeenAt })),
    };
    async function* body() {
      let opening = `${JSON.stringify(head).slice(0, -1)},`;
      for (const kind of kinds) {
        yield `${opening}"${kind.name}":[`;
        let first = true;
        for await (const page of kind.json(userId)) {
          yield (first ? '' : ',') + page.join(',');
          first = false;
        }
        opening = '],';
      }
      yield ']}\n';
    }
    return attachment(reply, 'application/json; charset=utf-8', 'stride-export.json').send(streamOf(body()));
  });

  // A kind alone, as CSV: /account/export/steps.csv, …/heartrate.csv, …
  for (const kind of kinds) {
    app.get(`/account/export/${kind.name}.csv`, async (request, reply) => {
      const session = sessionOf(request);
      const userId = session.user.id;
      if (!exports.enter(userId, reply)) return reply;
      async function* body() {
        yield `${kind.csvHeader}\n`;
        yield* kind.csv(userId);
      }
      return attachment(reply, 'text/csv; charset=utf-8', `stride-${kind.name}.csv`).send(streamOf(body()));
    });
  }

  app.post('/account/sessions/end', { config: formOn('/account') }, async (request, reply) => {
    const session = sessionOf(request);
    const which = text((request.body as Form).session);
    // Only one of the person's own sessions, and never the one in use (that is "Sign out").
    const ended = which !== session.idHash && (await stores.sessions.endOwn(session.user.id, which));
    return reply.redirect(`/account?sessions=${ended ? 'ended' : 'none'}#sessions-heading`, 303);
  });

  app.post('/account/sessions/end-others', { config: formOn('/account') }, async (request, reply) => {
    const session = sessionOf(request);
    await stores.sessions.endAllBut(session.user.id, session.idHash);
    return reply.redirect('/account?sessions=ended#sessions-heading', 303);
  });

  // Both check a password, counted per address and per account (password-checks.ts).
  const checks = passwordChecks(app);
  const signedOut = `/login?signed_out=${PASSWORD_CHECKS_SPENT}`;

  app.post('/account/password', { config: { ...checks.routeOptions.config, ...formOn('/account') } }, async (request, reply) => {
    const session = sessionOf(request);
    const form = request.body as Form;
    const check = await checks.check(request, reply, session, text(form.current_password));
    if (check === 'session-ended') return reply.redirect(signedOut, 303);
    const problem = check === 'wrong' ? 'wrong-current' : newPasswordProblem(text(form.new_password));
    if (problem) return reply.redirect(`/account?password=${problem}#password-heading`, 303);
    await stores.users.changePassword(session.user.id, await hashPassword(text(form.new_password)), session.idHash, clock());
    return reply.redirect('/account?password=changed#password-heading', 303);
  });

  app.post('/account/delete', { config: { ...checks.routeOptions.config, ...formOn('/account') } }, async (request, reply) => {
    const session = sessionOf(request);
    if ((await stores.users.countOwnedApps(session.user.id)) > 0) return reply.redirect('/account?delete=owns-apps#delete-heading', 303);
    const check = await checks.check(request, reply, session, text((request.body as Form).password));
    if (check === 'session-ended') return reply.redirect(signedOut, 303);
    if (check === 'wrong') return reply.redirect('/account?delete=wrong-password#delete-heading', 303);
    await stores.users.deleteAccount(session.user.id, clock());
    await endSession(request, reply);
    return reply.redirect('/account/deleted', 303);
  });

  app.get('/account/deleted', { config: { ownSessionCheck: true } }, async (_request: FastifyRequest, reply: FastifyReply) =>
    sendPage(reply, './account-deleted', { title: 'Your account is deleted' }),
  );
}

/** Why a new password cannot be taken, as the account page's query word; null when it can. */
function newPasswordProblem(next: string): string | null {
  return next.length < PASSWORD_MIN_LENGTH || next.length > PASSWORD_MAX_LENGTH ? 'bad-new' : null;
}

/**
 * The account page's words for the outcomes above (account.ts shows them), by query parameter and
 * value: a notice in its section, or — with `field` — a problem shown next to that field.
 */
export const ACCOUNT_DATA_OUTCOMES: Record<'sessions' | 'password' | 'delete', Record<string, { text: string; field?: 'current_password' | 'new_password' | 'delete_password' | 'delete' }>> = {
  sessions: { ended: { text: 'Signed out there. That session no longer works.' }, none: { text: 'That session had already ended.' } },
  password: {
    changed: { text: 'Your password is changed. Every other session is signed out.' },
    'wrong-current': { text: 'This is not your current password; nothing was changed.', field: 'current_password' },
    'bad-new': { text: `The new password must be from ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters; nothing was changed.`, field: 'new_password' },
  },
  delete: {
    'owns-apps': { text: 'You have registered apps. Delete them on the dashboard first: their users would lose them without a word.', field: 'delete' },
    'wrong-password': { text: 'The password was not right; your account is kept.', field: 'delete_password' },
  },
};
