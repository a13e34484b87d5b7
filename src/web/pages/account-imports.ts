/**
 * "Bring your Fitbit history" on the account page (docs/web.md, docs/takeout.md "The account
 * page"): a Google Takeout archive uploaded to a file the server owns, read in the background and
 * previewed, confirmed or discarded, followed while it runs, cancelled, and reported. The upload is
 * answered as soon as the file is on disk; the runner of every server process reads the archive
 * and carries the import on (src/domain/takeout/).
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cancelImport, importOf, importToRead, startImport } from '../../domain/takeout/imports.js';
import { isId } from '../../store/identifiers.js';
import { CSRF_FIELD, isValidSessionCsrf } from '../csrf.js';
import { signedInLayout } from '../forms.js';
import { formOn, sessionOf } from '../signed-in.js';
import { currentSession, type Session } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';
import { bytesText, importPageData, inProgress } from './import-view.js';

/** Seconds between reloads of the page of an import that is moving. */
const REFRESH_SECONDS = 3;
/** Seconds between reloads while the archive is read: a year takes a few seconds. */
const READING_REFRESH_SECONDS = 2;
/** The longest upload file name kept to show the person. */
const NAME_MAX = 200;

const BACK = { href: '/account#import-heading', label: 'Back to your account' };

/** The name the person gave the file, without any folder a browser may send, for showing only. */
function shownName(filename: string | undefined): string {
  const name = basename((filename ?? '').replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return name === '' ? 'takeout.zip' : name.slice(0, NAME_MAX);
}

const isTooLarge = (error: unknown) => (error as { code?: string } | null)?.code === 'FST_REQ_FILE_TOO_LARGE';

export async function accountImportPages(app: FastifyInstance): Promise<void> {
  const { stores, clock, config } = app.ctx;
  const dir = config.takeout.archiveDir;

  // Multipart bodies are read only by the upload below, as a stream to disk: never whole in memory.
  await app.register(multipart, {
    limits: { fileSize: config.takeout.maxArchiveBytes, files: 1, fields: 2, fieldSize: 200, parts: 3, headerPairs: 50 },
  });

  const notFound = (reply: FastifyReply) => sendErrorPage(reply, 404, 'Import not found', 'You have no import by that address.', BACK);

  /**
   * The import id in the address when it could be one; null after answering 404. Whose it is, the
   * domain's calls decide: another person's import is "not found" there, answered the same 404.
   */
  async function ownImportId(request: FastifyRequest, reply: FastifyReply): Promise<string | null> {
    const { id } = request.params as { id: string };
    if (!isId('takeoutImport', id)) {
      await notFound(reply);
      return null;
    }
    return id;
  }

  /**
   * Writes the upload to a new file of the server's folder; the path, or null after answering.
   * The CSRF field must come before the file (the form puts it first), so that nothing is written
   * for a form from elsewhere.
   */
  async function receive(request: FastifyRequest, reply: FastifyReply, session: Session): Promise<{ path: string; name: string } | null> {
    let csrf: unknown;
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname === CSRF_FIELD) csrf = part.value;
        continue;
      }
      if (!isValidSessionCsrf(session, csrf)) {
        part.file.resume();
        break;
      }
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, `upload-${randomUUID()}.zip`);
      try {
        await pipeline(part.file, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
        if (part.file.truncated) throw Object.assign(new Error('too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
      } catch (error) {
        await rm(path, { force: true });
        if (!isTooLarge(error)) throw error;
        await sendErrorPage(reply, 413, 'Archive too large', `The archive is larger than the ${bytesText(config.takeout.maxArchiveBytes)} an archive may be. Ask Google Takeout for smaller parts (its "File size" choice) and upload them one at a time.`, BACK);
        return null;
      }
      return { path, name: shownName(part.filename) };
    }
    if (!isValidSessionCsrf(session, csrf)) {
      await sendErrorPage(reply, 403, 'Request refused', 'The form was not sent from this Stride page (missing or wrong CSRF token). Reload the page and try again.');
      return null;
    }
    await sendErrorPage(reply, 400, 'No archive', 'Choose the .zip file Google Takeout gave you, then upload it.', BACK);
    return null;
  }

  app.post('/account/imports', { config: { ownSessionCheck: true } }, async (request, reply) => {
    const session = await currentSession(request);
    if (!session) return reply.redirect(`/login?return_to=${encodeURIComponent('/account')}`, 303);
    if (!request.isMultipart()) return sendErrorPage(reply, 400, 'No archive', 'Choose the .zip file Google Takeout gave you, then upload it.', BACK);
    let upload: { path: string; name: string } | null;
    try {
      upload = await receive(request, reply, session);
    } catch (error) {
      if (!isTooLarge(error)) throw error;
      return sendErrorPage(reply, 413, 'Archive too large', `The archive is larger than the ${bytesText(config.takeout.maxArchiveBytes)} an archive may be.`, BACK);
    }
    if (!upload) return reply;
    try {
      // Answered now: a runner reads the archive, and the import's page shows the preview once it is there.
      const bytes = (await stat(upload.path)).size;
      const reading = await importToRead(stores, session.user, { path: upload.path, name: upload.name, ownedByServer: true, bytes }, clock());
      return reply.redirect(`/account/imports/${reading.id}`, 303);
    } catch (error) {
      // Nothing would ever read or remove it.
      await rm(upload.path, { force: true });
      throw error;
    }
  });

  app.get('/account/imports/:id', async (request, reply) => {
    const session = sessionOf(request);
    const id = await ownImportId(request, reply);
    if (!id) return reply;
    const view = await importOf(stores, session.user.id, id);
    if (!view) return notFound(reply);
    const page = importPageData(view, clock());
    const title = view.state === 'previewed' ? 'Check your Fitbit archive' : view.state === 'reading' ? 'Reading your Fitbit archive' : 'Your Fitbit import';
    return sendPage(reply, './account-import', {
      ...signedInLayout(session, title, 'account'),
      ...(inProgress(view) ? { refreshSeconds: view.state === 'reading' ? READING_REFRESH_SECONDS : REFRESH_SECONDS } : {}),
      imported: page,
    });
  });

  app.post('/account/imports/:id/start', { config: formOn('/account') }, async (request, reply) => {
    const session = sessionOf(request);
    const id = await ownImportId(request, reply);
    if (!id) return reply;
    const outcome = await startImport(stores, session.user.id, id, clock());
    if ('refused' in outcome) {
      if (outcome.status === 404) return notFound(reply);
      return sendErrorPage(reply, 409, 'Import not started', `The import could not start: ${outcome.refused}.`, [{ href: `/account/imports/${id}`, label: 'Back to the import' }, BACK]);
    }
    return reply.redirect(`/account/imports/${id}`, 303);
  });

  // Cancel and Discard: a previewed or queued import ends at once, a running one at its next step.
  app.post('/account/imports/:id/cancel', { config: formOn('/account') }, async (request, reply) => {
    const session = sessionOf(request);
    const id = await ownImportId(request, reply);
    if (!id) return reply;
    const cancelled = await cancelImport(stores, session.user.id, id, clock(), config.webhooks.coalesceSeconds);
    if (!cancelled) return notFound(reply);
    return reply.redirect(`/account/imports/${id}`, 303);
  });
}
