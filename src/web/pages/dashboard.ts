/**
 * The developer dashboard (docs/web.md, `/dashboard`): the list of a developer's apps and the
 * registration of a new one. The pages of one app are in app-pages.ts and webhooks.ts, behind the
 * app scope's check (owned-app.ts). Every change goes through src/domain/apps.ts, the rules the
 * CLI uses too.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_GRANT_TYPES, registerApp } from '../../domain/apps.js';
import { formatScopes } from '../../domain/scopes.js';
import { signedInLayout, type Form } from '../forms.js';
import { sessionOf } from '../signed-in.js';
import { fieldErrors, GRANT_TYPE_CHOICES, readAppForm, SCOPE_CHOICES, settingsOf, type AppForm, type FieldErrors } from './app-form.js';
import type { Session } from '../session.js';
import { DRAFT_NOTICE, takeDraft } from '../form-drafts.js';
import { FORM_ID_FIELD, formIdOfPage, formMade, isFormId, pageWithFormId } from '../form-ids.js';
import { appPath } from '../owned-app.js';
import { keepSecretForOnce } from '../shown-once.js';
import { sendPage } from '../views.js';

const NEW_APP_PAGE = '/dashboard/apps/new';

export async function dashboardPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard', listOwnApps);
  app.get(NEW_APP_PAGE, newAppForm);
  app.post('/dashboard/apps', { config: { formPage: (_path, form) => pageWithFormId(NEW_APP_PAGE, form[FORM_ID_FIELD]) } }, registerFromForm);
}

function sendNewAppForm(reply: FastifyReply, session: Session, form: AppForm, errors: FieldErrors, status = 200, notice: string | null = null) {
  return sendPage(reply, './app-new', {
    ...signedInLayout(session, 'Register an app', 'dashboard'),
    form,
    errors,
    notice,
    scopeChoices: SCOPE_CHOICES,
    grantTypeChoices: GRANT_TYPE_CHOICES,
  }, status);
}

async function listOwnApps(request: FastifyRequest, reply: FastifyReply) {
  const session = sessionOf(request);
  const query = request.query as Form;
  const { stores } = request.server.ctx;
  const apps = await stores.apps.listWithConnectedUsers(session.user.id);
  const webhooks = await stores.webhooks.summaries(apps.map((app) => app.id));
  return sendPage(reply, './dashboard', {
    ...signedInLayout(session, 'Your apps', 'dashboard'),
    apps: apps.map((app) => ({ ...app, path: appPath(app), webhooks: webhooks.get(app.id) ?? { endpoints: 0, failing: 0 } })),
    notice: query.deleted === '1' ? 'The app was deleted. Every token it had is revoked.' : null,
  });
}

async function newAppForm(request: FastifyRequest, reply: FastifyReply) {
  const session = sessionOf(request);
  const formId = formIdOfPage(request, reply);
  if (formId === null) return reply;
  const draft = await takeDraft(request, reply, session, pageWithFormId(NEW_APP_PAGE, formId));
  if (draft) return sendNewAppForm(reply, session, { ...readAppForm(draft), formId }, {}, 200, DRAFT_NOTICE);
  const blank: AppForm = { formId, name: '', description: '', websiteUrl: '', redirectUris: '', scopes: ['read_profile'], isPublic: false, grantTypes: DEFAULT_GRANT_TYPES, grantTypesShown: true, requireDpop: false, requirePar: false };
  return sendNewAppForm(reply, session, blank, {});
}

async function registerFromForm(request: FastifyRequest, reply: FastifyReply) {
  const { stores, clock } = request.server.ctx;
  const body = request.body as Form;
  const session = sessionOf(request);
  const form = readAppForm(body);
  const settings = settingsOf(form);
  const errors = fieldErrors(settings);
  if (Object.keys(errors).length > 0) return sendNewAppForm(reply, session, form, errors, 400);
  // Named by the form and what identifies the app (form-ids.ts): a second send names the first's app.
  const clientId = isFormId(form.formId)
    ? formMade(session, 'app-registration', form.formId, [settings.name.trim(), form.isPublic, settings.redirectUris, formatScopes(settings.scopes)])
    : undefined;
  const madeAlready = async () => {
    const existing = clientId === undefined ? undefined : await stores.apps.findByClientId(clientId);
    return existing && existing.ownerId === session.user.id ? existing : undefined;
  };
  const already = await madeAlready();
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
    const twin = await madeAlready();
    if (twin) return reply.redirect(`${appPath(twin)}?registered=again`, 303);
    throw error;
  }
  // Stored as a hash: the secret is shown once, on the page the redirect lands on.
  if (registered.clientSecret) await keepSecretForOnce(request, reply, session, registered.app.clientId, registered.clientSecret);
  return reply.redirect(`${appPath(registered.app)}/created`, 303);
}
