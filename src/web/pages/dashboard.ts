/**
 * The developer dashboard (docs/web.md, `/dashboard`): register apps, see the client id,
 * get the client secret once, rotate it, change settings and delete. Every change goes through
 * src/domain/apps.ts, the rules the CLI uses too. Only an app's owner sees it; anyone else gets 404.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { grantsInvalidatedByScopeChange, registerApp, rotateClientSecret, updateAppSettings } from '../../domain/apps.js';
import { formatScopes, SCOPES, type Scope } from '../../domain/scopes.js';
import type { App } from '../../store/apps.js';
import { requireSession, requireSessionForm, signedInLayout, text, type Form } from '../forms.js';
import { clientIdFor, fieldErrors, formOf, readAppForm, SCOPE_CHOICES, settingsOf, type AppForm, type FieldErrors } from './app-form.js';
import type { Session } from '../session.js';
import { DRAFT_NOTICE, takeDraft } from '../form-drafts.js';
import { usageView, usageWindow } from './app-usage.js';
import { connectView } from './app-connect.js';
import { keepSecretForOnce, takeSecretShownOnce } from '../shown-once.js';
import { sendErrorPage, sendPage } from '../views.js';

const appPath = (app: App) => `/dashboard/apps/${encodeURIComponent(app.clientId)}`;

export async function dashboardPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard', listOwnApps);
  app.get('/dashboard/apps/new', newAppForm);
  app.post('/dashboard/apps', registerFromForm);
  app.get('/dashboard/apps/:clientId', showApp);
  app.get('/dashboard/apps/:clientId/created', showCreated);
  app.post('/dashboard/apps/:clientId', saveSettings);
  app.post('/dashboard/apps/:clientId/secret', rotateSecret);
  app.get('/dashboard/apps/:clientId/delete', confirmDeletion);
  app.post('/dashboard/apps/:clientId/delete', deleteOwnApp);
}

/** The app named in the URL when this user owns it; otherwise a 404 page is sent. */
async function ownedApp(request: FastifyRequest, reply: FastifyReply, session: Session): Promise<App | null> {
  const clientId = (request.params as { clientId: string }).clientId;
  const found = await request.server.ctx.stores.apps.findByClientId(clientId);
  // The same answer for "no such app" and "someone else's app": neither reveals anything.
  if (found && found.ownerId === session.user.id) return found;
  await sendErrorPage(reply, 404, 'App not found', 'There is no app with this client id among your apps.', { href: '/dashboard', label: 'Back to your apps' });
  return null;
}

async function sendDetail(
  reply: FastifyReply,
  session: Session,
  registered: App,
  options: { form?: AppForm; errors?: FieldErrors; newSecret?: string; notice?: string } = {},
  status = 200,
): Promise<FastifyReply> {
  const { config, clock, stores } = reply.server.ctx;
  // This process's counts go to the database first, so that a developer trying their app against
  // one server sees every request at once; other processes' arrive with their next flush.
  await reply.server.usage.flush().catch((error: unknown) => reply.log.warn({ err: error }, 'writing app usage failed; kept for the next try'));
  const { since, sinceSeconds } = usageWindow(clock());
  const usage = usageView(await stores.usage.forApp(registered.id, since, sinceSeconds), config, clock());
  return sendPage(reply, './app-detail', {
    ...signedInLayout(session, registered.name, 'dashboard'),
    usage,
    connect: connectView(registered, config),
    app: registered,
    path: appPath(registered),
    connectedUsers: await reply.server.ctx.stores.apps.countConnectedUsers(registered.id),
    webhooks: (await reply.server.ctx.stores.webhooks.summaries([registered.id])).get(registered.id) ?? { endpoints: 0, failing: 0 },
    form: options.form ?? formOf(registered),
    errors: options.errors ?? {},
    newSecret: options.newSecret ?? null,
    notice: options.notice ?? null,
    scopeChoices: SCOPE_CHOICES,
    describeScope: (name: string) => SCOPES[name as Scope] ?? name,
  }, status);
}

function sendNewAppForm(reply: FastifyReply, session: Session, form: AppForm, errors: FieldErrors, status = 200, notice: string | null = null) {
  return sendPage(reply, './app-new', {
    ...signedInLayout(session, 'Register an app', 'dashboard'),
    form,
    errors,
    notice,
    scopeChoices: SCOPE_CHOICES,
  }, status);
}

async function listOwnApps(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  if (!session) return reply;
  const query = request.query as Form;
  const { stores } = request.server.ctx;
  const apps = await stores.apps.listWithConnectedUsers(session.user.id);
  const webhooks = await stores.webhooks.summaries(apps.map((app) => app.id));
  return sendPage(reply, './dashboard', {
    ...signedInLayout(session, 'Your apps', 'dashboard'),
    apps: apps.map((app) => ({ ...app, webhooks: webhooks.get(app.id) ?? { endpoints: 0, failing: 0 } })),
    notice: query.deleted === '1' ? 'The app was deleted. Every token it had is revoked.' : null,
  });
}

async function newAppForm(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  if (!session) return reply;
  const registrationId = randomBytes(16).toString('base64url');
  const draft = await takeDraft(request, reply, session, '/dashboard/apps/new');
  if (draft) return sendNewAppForm(reply, session, { registrationId, ...readAppForm(draft) }, {}, 200, DRAFT_NOTICE);
  const blank: AppForm = { registrationId, name: '', description: '', websiteUrl: '', redirectUris: '', scopes: ['read_profile'], isPublic: false };
  return sendNewAppForm(reply, session, blank, {});
}

async function registerFromForm(request: FastifyRequest, reply: FastifyReply) {
  const { stores, clock } = request.server.ctx;
  const session = await requireSessionForm(request, reply, '/dashboard/apps/new');
  if (!session) return reply;
  const form = readAppForm(request.body as Form);
  const settings = settingsOf(form);
  const errors = fieldErrors(settings);
  if (Object.keys(errors).length > 0) return sendNewAppForm(reply, session, form, errors, 400);
  const clientId = form.registrationId === undefined ? undefined : clientIdFor(session, form.registrationId);
  const sentAgain = async () => {
    const existing = clientId === undefined ? undefined : await stores.apps.findByClientId(clientId);
    return existing && existing.ownerId === session.user.id ? existing : undefined;
  };
  const already = (await sentAgain()) ?? (await sameAppJustRegistered(request, session, form));
  if (already) return reply.redirect(`${appPath(already)}?registered=again`, 303);
  let registered;
  try {
    registered = await registerApp(stores.apps, clock, session.user.id, {
      ...settings,
      isPublic: form.isPublic,
      ...(clientId !== undefined && { clientId }),
    });
  } catch (error) {
    // The same form sent twice at once: the unique client id lets one of them through.
    const twin = await sentAgain();
    if (twin) return reply.redirect(`${appPath(twin)}?registered=again`, 303);
    throw error;
  }
  // Stored as a hash: the secret is shown once, on the page the redirect lands on.
  if (registered.clientSecret) await keepSecretForOnce(request, reply, session, registered.app.clientId, registered.clientSecret);
  return reply.redirect(`${appPath(registered.app)}/created`, 303);
}

/** How long an identical registration counts as the same form sent again from a stale page. */
const RESENT_WITHIN_SECONDS = 600;

/**
 * An app of this developer registered moments ago with exactly these settings: the form was sent
 * again after Back (the page, loaded anew, has a new registration id), not a second app wanted.
 */
async function sameAppJustRegistered(request: FastifyRequest, session: Session, form: AppForm): Promise<App | undefined> {
  const settings = settingsOf(form);
  const since = request.server.ctx.clock() - RESENT_WITHIN_SECONDS;
  const own = await request.server.ctx.stores.apps.listWithConnectedUsers(session.user.id);
  return own.find(
    (app) =>
      app.createdAt >= since &&
      app.name === settings.name &&
      app.isPublic === form.isPublic &&
      app.redirectUris.join('\n') === settings.redirectUris.join('\n') &&
      formatScopes(app.scopes) === formatScopes(settings.scopes),
  );
}

/** Where registration lands: the credentials, the secret among them the first time only. */
async function showCreated(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  if (!session) return reply;
  const owned = await ownedApp(request, reply, session);
  if (!owned) return reply;
  return sendPage(reply, './app-created', {
    ...signedInLayout(session, `${owned.name} is registered`, 'dashboard'),
    app: owned,
    path: appPath(owned),
    clientSecret: owned.isPublic ? null : await takeSecretShownOnce(request, reply, session, owned.clientId),
  });
}

async function showApp(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  if (!session) return reply;
  const owned = await ownedApp(request, reply, session);
  if (!owned) return reply;
  const query = request.query as Form;
  const draft = await takeDraft(request, reply, session, appPath(owned));
  if (draft) return sendDetail(reply, session, owned, { form: { ...readAppForm(draft), isPublic: owned.isPublic }, notice: DRAFT_NOTICE });
  let notice: string | undefined;
  if (query.saved === '1') {
    const ended = Number.parseInt(text(query.ended), 10);
    notice = ended > 0 ? `Saved. ${ended} ${ended === 1 ? "user's grant was" : "users' grants were"} ended.` : 'Saved.';
  } else if (query.registered === 'again') {
    notice = 'This app was already registered by this form; no second app was made. Its client secret was shown only once: if you did not copy it, rotate it below.';
  } else if (query.rotated === '1') {
    const newSecret = await takeSecretShownOnce(request, reply, session, owned.clientId);
    if (newSecret) return sendDetail(reply, session, owned, { newSecret, notice: 'A new client secret was issued. The old one no longer works.' });
    notice = 'The new client secret was shown once already, and the old one no longer works. If you did not copy it, rotate it again.';
  }
  return sendDetail(reply, session, owned, notice === undefined ? {} : { notice });
}

async function saveSettings(request: FastifyRequest, reply: FastifyReply) {
  const { stores, clock } = request.server.ctx;
  const session = await requireSessionForm(request, reply, request.url);
  if (!session) return reply;
  const owned = await ownedApp(request, reply, session);
  if (!owned) return reply;
  const body = request.body as Form;
  const form = { ...readAppForm(body), isPublic: owned.isPublic };
  const settings = settingsOf(form);
  const errors = fieldErrors(settings);
  if (Object.keys(errors).length > 0) return sendDetail(reply, session, owned, { form, errors }, 400);

  const scopesChange = formatScopes(settings.scopes) !== formatScopes(owned.scopes);
  if (scopesChange && text(body.confirm_scope_change) !== 'yes') {
    // Say how many users' grants the change ends before making it.
    return sendPage(reply, './app-scope-confirm', {
      ...signedInLayout(session, `Change the scopes of ${owned.name}?`, 'dashboard'),
      app: owned,
      path: appPath(owned),
      grantsEnded: await grantsInvalidatedByScopeChange(stores.apps, owned, settings.scopes),
      oldScopes: owned.scopes.map((name) => ({ name, description: SCOPES[name as Scope] ?? name })),
      newScopes: settings.scopes.map((name) => ({ name, description: SCOPES[name as Scope] ?? name })),
      hidden: [
        ['name', form.name],
        ['description', form.description],
        ['website_url', form.websiteUrl],
        ['redirect_uris', settings.redirectUris.join('\n')],
        ['scopes', formatScopes(settings.scopes)],
        ['confirm_scope_change', 'yes'],
      ],
    });
  }
  const { grantsRevoked } = await updateAppSettings(stores.apps, clock, owned, settings);
  return reply.redirect(`${appPath(owned)}?saved=1&ended=${grantsRevoked}`, 303);
}

async function rotateSecret(request: FastifyRequest, reply: FastifyReply) {
  const params = request.params as { clientId: string };
  const session = await requireSessionForm(request, reply, `/dashboard/apps/${encodeURIComponent(params.clientId)}`);
  if (!session) return reply;
  const owned = await ownedApp(request, reply, session);
  if (!owned) return reply;
  if (owned.isPublic) return sendErrorPage(reply, 400, 'No client secret', 'Public apps have no client secret to rotate.', { href: appPath(owned), label: 'Back to the app' });
  const newSecret = await rotateClientSecret(request.server.ctx.stores.apps, request.server.ctx.clock, owned);
  await keepSecretForOnce(request, reply, session, owned.clientId, newSecret);
  return reply.redirect(`${appPath(owned)}?rotated=1`, 303);
}

async function confirmDeletion(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  if (!session) return reply;
  const owned = await ownedApp(request, reply, session);
  if (!owned) return reply;
  return sendPage(reply, './app-delete', {
    ...signedInLayout(session, `Delete ${owned.name}?`, 'dashboard'),
    app: owned,
    path: appPath(owned),
    connectedUsers: await request.server.ctx.stores.apps.countConnectedUsers(owned.id),
  });
}

async function deleteOwnApp(request: FastifyRequest, reply: FastifyReply) {
  const params = request.params as { clientId: string };
  const session = await requireSessionForm(request, reply, `/dashboard/apps/${encodeURIComponent(params.clientId)}/delete`);
  if (!session) return reply;
  const owned = await ownedApp(request, reply, session);
  if (!owned) return reply;
  // Grants, codes and tokens go with the app (foreign-key cascade).
  await request.server.ctx.stores.apps.delete(owned.id);
  return reply.redirect('/dashboard?deleted=1', 303);
}
