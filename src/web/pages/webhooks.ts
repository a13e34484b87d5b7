/**
 * The webhook endpoints of an app on the dashboard (docs/webhooks.md, docs/web.md): add one,
 * change it, pause and resume it, send a test event, rotate its secret, delete it, and read its
 * delivery log with a Redeliver button per message. Every change is POST-redirect-GET; a secret is
 * shown once, on the page the redirect lands on.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_TYPES } from '../../store/events.js';
import type { App } from '../../store/apps.js';
import type { WebhookEndpoint } from '../../store/webhooks.js';
import { addEndpoint, EndpointInputError, SECRET_OVERLAP_SECONDS, updateEndpoint } from '../../webhooks/endpoints.js';
import { formatTime, requireSession, requireSessionForm, signedInLayout, text, values, type Form } from '../forms.js';
import type { Session } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';
import { DRAFT_NOTICE, takeDraft } from '../form-drafts.js';

const appPath = (app: App) => `/dashboard/apps/${encodeURIComponent(app.clientId)}`;
const listPath = (app: App) => `${appPath(app)}/webhooks`;
const endpointPath = (app: App, endpoint: WebhookEndpoint) => `${listPath(app)}/${encodeURIComponent(endpoint.id)}`;

const NOTICES: Record<string, string> = {
  added: 'The endpoint was added. Stride sends it a verification challenge now, and delivers nothing until it answers.',
  /** The page of `added` seen again (a reload) once the endpoint has answered. */
  addedAndVerified: 'The endpoint was added and answered the verification challenge: messages are delivered to it.',
  again: 'This endpoint was already added by this form; no second one was made. Its secret was shown once: if you did not copy it, rotate it.',
  saved: 'Saved. A new URL is verified again before anything is delivered to it.',
  paused: 'Paused. Messages wait until you resume.',
  resumed: 'Resumed.',
  test: 'A webhook.test event is on its way; see the log below.',
  redelivered: 'The message will be sent again within seconds.',
  rotated: 'A new secret was issued. The old one also signs messages for 24 hours.',
};

export async function webhookPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/apps/:clientId/webhooks', list);
  app.post('/dashboard/apps/:clientId/webhooks', add);
  app.get('/dashboard/apps/:clientId/webhooks/:id', show);
  app.post('/dashboard/apps/:clientId/webhooks/:id', save);
  app.post('/dashboard/apps/:clientId/webhooks/:id/:action', act);
}

/** The app (owned by this user) and, when the URL names one, its endpoint; else a 404 page is sent. */
async function owned(request: FastifyRequest, reply: FastifyReply, session: Session): Promise<{ app: App; endpoint?: WebhookEndpoint } | null> {
  const { clientId, id } = request.params as { clientId: string; id?: string };
  const { stores } = request.server.ctx;
  const found = await stores.apps.findByClientId(clientId);
  if (found && found.ownerId === session.user.id) {
    if (id === undefined) return { app: found };
    const endpoint = await stores.webhooks.find(id);
    if (endpoint && endpoint.app_id === found.id) return { app: found, endpoint };
  }
  await sendErrorPage(reply, 404, 'Not found', 'There is no such app or endpoint among your apps.', { href: '/dashboard', label: 'Back to your apps' });
  return null;
}

function sendList(reply: FastifyReply, session: Session, app: App, endpoints: WebhookEndpoint[], form: { url: string; events: string[]; formId: string }, error: string | null, status = 200, notice: string | null = null) {
  return sendPage(reply, './webhooks', {
    ...signedInLayout(session, `Webhooks of ${app.name}`, 'dashboard'),
    app,
    appPath: appPath(app),
    path: listPath(app),
    endpoints: endpoints.map((endpoint) => ({ ...endpoint, path: endpointPath(app, endpoint), events: endpoint.event_types.split(' ') })),
    eventTypes: EVENT_TYPES,
    form,
    error,
    notice,
  }, status);
}

async function list(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  const found = session && (await owned(request, reply, session));
  if (!session || !found) return reply;
  const endpoints = await request.server.ctx.stores.webhooks.list(found.app.id);
  const formId = randomBytes(16).toString('base64url');
  const draft = await takeDraft(request, reply, session, request.url.split('?')[0]!);
  if (draft) {
    // The same form id: sending the draft twice still adds one endpoint.
    const kept = text(draft.form_id);
    return sendList(reply, session, found.app, endpoints, { url: text(draft.url), events: values(draft.events), formId: /^[\w-]{16,64}$/.test(kept) ? kept : formId }, null, 200, DRAFT_NOTICE);
  }
  const notice = (request.query as Form).deleted === '1' ? 'The endpoint was deleted.' : null;
  return sendList(reply, session, found.app, endpoints, { url: '', events: [...EVENT_TYPES], formId }, null, 200, notice);
}

/** A form sent again (reload, Back and send) names the endpoint it already made, as app registration does. */
const endpointIdFor = (session: Session, formId: string) => `we_${createHmac('sha256', session.csrfSecret).update(`webhook-endpoint:${formId}`).digest('base64url').slice(0, 16)}`;

async function add(request: FastifyRequest, reply: FastifyReply) {
  const { stores, config, clock } = request.server.ctx;
  const session = await requireSessionForm(request, reply, request.url);
  const found = session && (await owned(request, reply, session));
  if (!session || !found) return reply;
  const body = request.body as Form;
  const form = { url: text(body.url).trim(), events: values(body.events), formId: text(body.form_id) };
  const id = /^[\w-]{16,64}$/.test(form.formId) ? endpointIdFor(session, form.formId) : undefined;
  const existing = id === undefined ? undefined : await stores.webhooks.find(id);
  if (existing && existing.app_id === found.app.id) return reply.redirect(`${endpointPath(found.app, existing)}?done=again`, 303);
  try {
    const endpoint = await addEndpoint(stores.webhooks, config, found.app.id, { url: form.url, events: form.events }, clock(), { ...(id && { id }), showOnce: true });
    return reply.redirect(`${endpointPath(found.app, endpoint)}?done=added`, 303);
  } catch (error) {
    if (!(error instanceof EndpointInputError)) throw error;
    return sendList(reply, session, found.app, await stores.webhooks.list(found.app.id), form, error.message, 400);
  }
}

async function show(request: FastifyRequest, reply: FastifyReply) {
  const session = await requireSession(request, reply);
  const found = session && (await owned(request, reply, session));
  if (!session || !found?.endpoint) return reply;
  const { stores } = request.server.ctx;
  const draft = await takeDraft(request, reply, session, request.url.split('?')[0]!);
  if (draft) return sendDetail(reply, session, found.app, found.endpoint, { notice: DRAFT_NOTICE, form: { url: text(draft.url), events: values(draft.events) } });
  const done = text((request.query as Form).done);
  return sendDetail(reply, session, found.app, found.endpoint, {
    notice: NOTICES[done === 'added' && found.endpoint.state !== 'unverified' ? 'addedAndVerified' : done] ?? null,
    // Shown on the page a redirect lands on, once: a reload finds it already shown.
    newSecret: (await stores.webhooks.revealSecret(found.endpoint.id)) ?? null,
  });
}

async function sendDetail(reply: FastifyReply, session: Session, app: App, endpoint: WebhookEndpoint, options: { notice?: string | null; newSecret?: string | null; error?: string; form?: { url: string; events: string[] } }, status = 200) {
  const deliveries = await reply.server.ctx.stores.webhooks.deliveries(endpoint.id, 50);
  const zone = session.user.timezone;
  return sendPage(reply, './webhook-detail', {
    ...signedInLayout(session, `Webhook endpoint of ${app.name}`, 'dashboard'),
    app,
    appPath: appPath(app),
    listPath: listPath(app),
    path: endpointPath(app, endpoint),
    endpoint,
    form: options.form ?? { url: endpoint.url, events: endpoint.event_types.split(' ') },
    eventTypes: EVENT_TYPES,
    notice: options.notice ?? null,
    newSecret: options.newSecret ?? null,
    error: options.error ?? null,
    deliveries: deliveries.map((d) => ({
      ...d,
      created: formatTime(d.created_at, zone),
      nextRetry: d.state === 'pending' && d.attempts > 0 ? formatTime(d.next_attempt_at, zone) : null,
    })),
  }, status);
}

async function save(request: FastifyRequest, reply: FastifyReply) {
  const { stores, config, clock } = request.server.ctx;
  const session = await requireSessionForm(request, reply, request.url);
  const found = session && (await owned(request, reply, session));
  if (!session || !found?.endpoint) return reply;
  const body = request.body as Form;
  const form = { url: text(body.url).trim(), events: values(body.events) };
  try {
    await updateEndpoint(stores.webhooks, config, found.endpoint.id, form, clock());
    return reply.redirect(`${endpointPath(found.app, found.endpoint)}?done=saved`, 303);
  } catch (error) {
    if (!(error instanceof EndpointInputError)) throw error;
    return sendDetail(reply, session, found.app, found.endpoint, { error: error.message, form }, 400);
  }
}

async function act(request: FastifyRequest, reply: FastifyReply) {
  const { stores, clock } = request.server.ctx;
  const session = await requireSessionForm(request, reply, request.url.replace(/\/[^/]*$/, ''));
  const found = session && (await owned(request, reply, session));
  if (!session || !found?.endpoint) return reply;
  const { app, endpoint } = found;
  const action = (request.params as { action: string }).action;
  const done = (notice: string) => reply.redirect(`${endpointPath(app, endpoint)}?done=${notice}`, 303);
  switch (action) {
    case 'pause':
      await stores.webhooks.update(endpoint.id, { state: 'paused' }, clock());
      return done('paused');
    case 'resume':
      await stores.webhooks.update(endpoint.id, { state: 'active' }, clock());
      return done('resumed');
    case 'test':
      await stores.webhooks.sendTest(endpoint.id, clock());
      return done('test');
    case 'rotate-secret':
      await stores.webhooks.rotateSecret(endpoint.id, clock(), SECRET_OVERLAP_SECONDS, { showOnce: true });
      return done('rotated');
    case 'redeliver':
      await stores.webhooks.redeliver(endpoint.id, text((request.body as Form).delivery_id), clock());
      return done('redelivered');
    case 'delete':
      await stores.webhooks.delete(endpoint.id);
      return reply.redirect(`${listPath(app)}?deleted=1`, 303);
    default:
      return sendErrorPage(reply, 404, 'Not found', 'There is no such action.', { href: endpointPath(app, endpoint), label: 'Back to the endpoint' });
  }
}
