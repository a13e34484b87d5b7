/**
 * The pages of one app on the developer dashboard (docs/web.md): its credentials, the client
 * secret shown once after registration or rotation, its settings (with the scope-change preview),
 * its usage, and its deletion. Registered in the app scope (owned-app.ts): every handler here runs
 * for the signed-in owner of the app only, and reads both from `ownedBy(request)`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { grantsInvalidatedByScopeChange, rotateClientSecret, updateAppSettings } from '../../domain/apps.js';
import { formatScopes, SCOPES, type Scope } from '../../domain/scopes.js';
import type { App } from '../../store/apps.js';
import { signedInLayout, text, type Form } from '../forms.js';
import { fieldErrors, formOf, GRANT_TYPE_CHOICES, readAppForm, SCOPE_CHOICES, settingsOf, type AppForm, type FieldErrors } from './app-form.js';
import type { Session } from '../session.js';
import { DRAFT_NOTICE, takeDraft } from '../form-drafts.js';
import { usageView, usageWindow } from './app-usage.js';
import { connectView } from './app-connect.js';
import { appPath, ownedBy, pageAbove } from '../owned-app.js';
import { keepSecretForOnce, takeSecretShownOnce } from '../shown-once.js';
import { sendErrorPage, sendPage } from '../views.js';

export async function appPages(scope: FastifyInstance): Promise<void> {
  scope.get('/', showApp);
  scope.get('/created', showCreated);
  scope.post('/', saveSettings);
  // The Rotate button is on the app's page.
  scope.post('/secret', { config: { formPage: pageAbove } }, rotateSecret);
  scope.get('/delete', confirmDeletion);
  scope.post('/delete', deleteOwnApp);
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
    connectedUsers: await stores.apps.countConnectedUsers(registered.id),
    webhooks: (await stores.webhooks.summaries([registered.id])).get(registered.id) ?? { endpoints: 0, failing: 0 },
    form: options.form ?? formOf(registered),
    errors: options.errors ?? {},
    newSecret: options.newSecret ?? null,
    notice: options.notice ?? null,
    scopeChoices: SCOPE_CHOICES,
    grantTypeChoices: GRANT_TYPE_CHOICES,
    describeScope: (name: string) => SCOPES[name as Scope] ?? name,
  }, status);
}

/** Where registration lands: the credentials, the secret among them the first time only. */
async function showCreated(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  return sendPage(reply, './app-created', {
    ...signedInLayout(session, `${app.name} is registered`, 'dashboard'),
    app,
    path: appPath(app),
    clientSecret: app.isPublic ? null : await takeSecretShownOnce(request, reply, session, app.clientId),
  });
}

async function showApp(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  const query = request.query as Form;
  const draft = await takeDraft(request, reply, session, appPath(app));
  if (draft) return sendDetail(reply, session, app, { form: { ...readAppForm(draft), isPublic: app.isPublic }, notice: DRAFT_NOTICE });
  let notice: string | undefined;
  if (query.saved === '1') {
    const ended = Number.parseInt(text(query.ended), 10);
    notice = ended > 0 ? `Saved. ${ended} ${ended === 1 ? "user's grant was" : "users' grants were"} ended.` : 'Saved.';
  } else if (query.registered === 'again') {
    notice = 'This app was already registered by this form; no second app was made. Its client secret was shown only once: if you did not copy it, rotate it below.';
  } else if (query.rotated === '1') {
    const newSecret = await takeSecretShownOnce(request, reply, session, app.clientId);
    if (newSecret) return sendDetail(reply, session, app, { newSecret, notice: 'A new client secret was issued. The old one no longer works.' });
    notice = 'The new client secret was shown once already, and the old one no longer works. If you did not copy it, rotate it again.';
  }
  return sendDetail(reply, session, app, notice === undefined ? {} : { notice });
}

async function saveSettings(request: FastifyRequest, reply: FastifyReply) {
  const { stores, clock } = request.server.ctx;
  const { session, app } = ownedBy(request);
  const body = request.body as Form;
  const form = { ...readAppForm(body), isPublic: app.isPublic };
  const settings = settingsOf(form);
  const errors = fieldErrors(settings);
  if (Object.keys(errors).length > 0) return sendDetail(reply, session, app, { form, errors }, 400);

  const scopesChange = formatScopes(settings.scopes) !== formatScopes(app.scopes);
  if (scopesChange && text(body.confirm_scope_change) !== 'yes') {
    // Say how many users' grants the change ends before making it.
    return sendPage(reply, './app-scope-confirm', {
      ...signedInLayout(session, `Change the scopes of ${app.name}?`, 'dashboard'),
      app,
      path: appPath(app),
      grantsEnded: await grantsInvalidatedByScopeChange(stores.apps, app, settings.scopes),
      oldScopes: app.scopes.map((name) => ({ name, description: SCOPES[name as Scope] ?? name })),
      newScopes: settings.scopes.map((name) => ({ name, description: SCOPES[name as Scope] ?? name })),
      hidden: [
        ['name', form.name],
        ['description', form.description],
        ['website_url', form.websiteUrl],
        ['redirect_uris', settings.redirectUris.join('\n')],
        ['scopes', formatScopes(settings.scopes)],
        ['require_dpop', form.requireDpop ? 'yes' : 'no'],
        ...(form.requirePar ? [['require_par', 'yes']] : []),
        ...form.grantTypes.map((name) => ['grant_types', name]),
        ['confirm_scope_change', 'yes'],
      ],
    });
  }
  const { grantsRevoked } = await updateAppSettings(stores.apps, clock, app, settings);
  return reply.redirect(`${appPath(app)}?saved=1&ended=${grantsRevoked}`, 303);
}

async function rotateSecret(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  if (app.isPublic) return sendErrorPage(reply, 400, 'No client secret', 'Public apps have no client secret to rotate.', { href: appPath(app), label: 'Back to the app' });
  const newSecret = await rotateClientSecret(request.server.ctx.stores, request.server.ctx.clock, app);
  await keepSecretForOnce(request, reply, session, app.clientId, newSecret);
  return reply.redirect(`${appPath(app)}?rotated=1`, 303);
}

async function confirmDeletion(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  return sendPage(reply, './app-delete', {
    ...signedInLayout(session, `Delete ${app.name}?`, 'dashboard'),
    app,
    path: appPath(app),
    connectedUsers: await request.server.ctx.stores.apps.countConnectedUsers(app.id),
  });
}

async function deleteOwnApp(request: FastifyRequest, reply: FastifyReply) {
  const { app } = ownedBy(request);
  // Grants, codes and tokens go with the app (foreign-key cascade).
  await request.server.ctx.stores.apps.delete(app.id);
  return reply.redirect('/dashboard?deleted=1', 303);
}
