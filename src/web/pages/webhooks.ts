/**
 * The webhook endpoints of an app on the dashboard (docs/webhooks.md, docs/web.md): add one,
 * change it, pause and resume it, send a test event, rotate its secret, delete it, and read its
 * delivery log with a Redeliver button per message. Every change is POST-redirect-GET; a secret is
 * shown once, on the page the redirect lands on.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_TYPES } from '../../store/events.js';
import type { App } from '../../store/apps.js';
import type { WebhookEndpoint } from '../../store/webhooks.js';
import { addEndpoint, EndpointInputError, SECRET_OVERLAP_SECONDS, updateEndpoint } from '../../webhooks/endpoints.js';
import { formatTime, signedInLayout, text, values, type Form } from '../forms.js';
import type { Session } from '../session.js';
import { sendErrorPage, sendPage } from '../views.js';
import { DRAFT_NOTICE, takeDraft } from '../form-drafts.js';
import { FORM_ID_FIELD, formIdOfPage, formMade, isFormId, pageWithFormId } from '../form-ids.js';
import { appPath, ownedBy, pageAbove } from '../owned-app.js';

const listPath = (app: App) => `${appPath(app)}/webhooks`;
const endpointPath = (app: App, endpoint: WebhookEndpoint) => `${listPath(app)}/${encodeURIComponent(endpoint.id)}`;

declare module 'fastify' {
  interface FastifyRequest {
    /** The endpoint an endpoint page's address names, of the app of the app scope (findEndpoint). */
    endpoint: WebhookEndpoint | null;
  }
}

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

/** Registered in the app scope (owned-app.ts): the app is the signed-in person's own. */
export async function webhookPages(scope: FastifyInstance): Promise<void> {
  scope.decorateRequest('endpoint', null);
  scope.get('/webhooks', list);
  scope.post('/webhooks', { config: { formPage: (path, form) => pageWithFormId(path, form[FORM_ID_FIELD]) } }, add);
  scope.get('/webhooks/:id', { preHandler: findEndpoint }, show);
  scope.post('/webhooks/:id', { preHandler: findEndpoint }, save);
  // The buttons are on the endpoint's page.
  scope.get('/webhooks/:id/deliveries/:deliveryId', { preHandler: findEndpoint }, showDelivery);
  scope.post('/webhooks/:id/:action', { preHandler: findEndpoint, config: { formPage: pageAbove } }, act);
}

/** After the app scope's check: the endpoint named in the address, when it is the app's; else a 404 page. */
async function findEndpoint(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const { app } = ownedBy(request);
  const endpoint = await request.server.ctx.stores.webhooks.find((request.params as { id: string }).id);
  if (!endpoint || endpoint.app_id !== app.id) {
    return sendErrorPage(reply, 404, 'Endpoint not found', 'This app has no such webhook endpoint.', { href: listPath(app), label: `Back to the webhooks of ${app.name}` });
  }
  request.endpoint = endpoint;
  return undefined;
}

/** The session, the app and the endpoint of an endpoint page (findEndpoint has run). */
function endpointOf(request: FastifyRequest): { session: Session; app: App; endpoint: WebhookEndpoint } {
  if (!request.endpoint) throw new Error(`${request.url} has no endpoint`);
  return { ...ownedBy(request), endpoint: request.endpoint };
}

/** A problem of the form, by the field it is about (`form` when it is about none). */
type FormErrors = Partial<Record<'url' | 'events' | 'form', string>>;

async function sendList(reply: FastifyReply, session: Session, app: App, endpoints: WebhookEndpoint[], form: { url: string; events: string[]; formId: string }, errors: FormErrors, status = 200, notice: string | null = null) {
  return sendPage(reply, './webhooks', {
    // Its own page (fitbit-subscriber.ts); its state is shown here beside the endpoints'.
    fitbitSubscriber: (await reply.server.ctx.stores.fitbitSubscriptions.subscriber(app.id)) ?? null,
    ...signedInLayout(session, `Webhooks of ${app.name}`, 'dashboard'),
    app,
    appPath: appPath(app),
    path: listPath(app),
    endpoints: endpoints.map((endpoint) => ({ ...endpoint, path: endpointPath(app, endpoint), events: endpoint.event_types.split(' ') })),
    eventTypes: EVENT_TYPES,
    allowPrivate: reply.server.ctx.config.webhooks.allowPrivate,
    form,
    errors,
    notice,
  }, status);
}

async function list(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  // The add form's id is in the page's address (form-ids.ts): Back and send adds nothing twice.
  const formId = formIdOfPage(request, reply);
  if (formId === null) return reply;
  const endpoints = await request.server.ctx.stores.webhooks.list(app.id);
  const draft = await takeDraft(request, reply, session, pageWithFormId(listPath(app), formId));
  if (draft) return sendList(reply, session, app, endpoints, { url: text(draft.url), events: values(draft.events), formId }, {}, 200, DRAFT_NOTICE);
  const notice = (request.query as Form).deleted === '1' ? 'The endpoint was deleted.' : null;
  return sendList(reply, session, app, endpoints, { url: '', events: [...EVENT_TYPES], formId }, {}, 200, notice);
}

async function add(request: FastifyRequest, reply: FastifyReply) {
  const { stores, config, clock } = request.server.ctx;
  const { session, app } = ownedBy(request);
  const body = request.body as Form;
  const form = { url: text(body.url).trim(), events: values(body.events), formId: text(body[FORM_ID_FIELD]) };
  // Named by the form and the endpoint's URL and events: a second send names the first's endpoint.
  const id = isFormId(form.formId) ? `we_${formMade(session, 'webhook-endpoint', form.formId, [form.url, [...form.events].sort()]).slice(0, 24)}` : undefined;
  const madeAlready = async () => {
    const existing = id === undefined ? undefined : await stores.webhooks.find(id);
    return existing && existing.app_id === app.id ? existing : undefined;
  };
  const already = await madeAlready();
  if (already) return reply.redirect(`${endpointPath(app, already)}?done=again`, 303);
  try {
    const endpoint = await addEndpoint(stores.webhooks, config, app.id, { url: form.url, events: form.events }, clock(), { ...(id && { id }), showOnce: true });
    return reply.redirect(`${endpointPath(app, endpoint)}?done=added`, 303);
  } catch (error) {
    // The same form sent twice at once: the unique endpoint id lets one of them through.
    const twin = await madeAlready();
    if (twin) return reply.redirect(`${endpointPath(app, twin)}?done=again`, 303);
    if (!(error instanceof EndpointInputError)) throw error;
    return sendList(reply, session, app, await stores.webhooks.list(app.id), form, fieldErrorOf(error), 400);
  }
}

/** The endpoint rules' problem as the form shows it: a sentence, next to the field it is about. */
function fieldErrorOf(error: EndpointInputError): FormErrors {
  const sentence = error.message.charAt(0).toUpperCase() + error.message.slice(1) + '.';
  return { [error.field ?? 'form']: sentence };
}

async function show(request: FastifyRequest, reply: FastifyReply) {
  const { session, app, endpoint } = endpointOf(request);
  const { stores } = request.server.ctx;
  const draft = await takeDraft(request, reply, session, endpointPath(app, endpoint));
  if (draft) return sendDetail(reply, session, app, endpoint, { notice: DRAFT_NOTICE, form: { url: text(draft.url), events: values(draft.events) } });
  const done = text((request.query as Form).done);
  return sendDetail(reply, session, app, endpoint, {
    notice: NOTICES[done === 'added' && endpoint.state !== 'unverified' ? 'addedAndVerified' : done] ?? null,
    // Shown on the page a redirect lands on, once: a reload finds it already shown.
    newSecret: (await stores.webhooks.revealSecret(endpoint.id)) ?? null,
  });
}

async function sendDetail(reply: FastifyReply, session: Session, app: App, endpoint: WebhookEndpoint, options: { notice?: string | null; newSecret?: string | null; errors?: FormErrors; form?: { url: string; events: string[] } }, status = 200) {
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
    allowPrivate: reply.server.ctx.config.webhooks.allowPrivate,
    notice: options.notice ?? null,
    newSecret: options.newSecret ?? null,
    errors: options.errors ?? {},
    deliveries: deliveries.map((d) => ({
      ...d,
      created: formatTime(d.created_at, zone),
      nextRetry: d.state === 'pending' && d.attempts > 0 ? formatTime(d.next_attempt_at, zone) : null,
    })),
  }, status);
}

/** While a delivery waits for its first attempt, its page reloads itself this often. */
const DELIVERY_REFRESH_SECONDS = 2;

const deliveryPath = (app: App, endpoint: WebhookEndpoint, deliveryId: string) => `${endpointPath(app, endpoint)}/deliveries/${encodeURIComponent(deliveryId)}`;

/** A delivery's page: the payload sent, the receiver's status and the first 1 KB of its answer. */
async function showDelivery(request: FastifyRequest, reply: FastifyReply) {
  const { session, app, endpoint } = endpointOf(request);
  const deliveryId = (request.params as { deliveryId: string }).deliveryId;
  const delivery = await request.server.ctx.stores.webhooks.delivery(endpoint.id, deliveryId);
  if (!delivery) return sendErrorPage(reply, 404, 'Not found', 'This endpoint has no such delivery: old ones are deleted after EVENT_RETENTION.', { href: endpointPath(app, endpoint), label: 'Back to the endpoint' });
  const waiting = delivery.state === 'pending' && delivery.attempts === 0;
  let payload = delivery.payload;
  try {
    payload = JSON.stringify(JSON.parse(delivery.payload), null, 2);
  } catch {
    // Shown as sent.
  }
  return sendPage(reply, './webhook-delivery', {
    ...signedInLayout(session, `Delivery of ${delivery.type}`, 'dashboard'),
    ...(waiting && { refreshSeconds: DELIVERY_REFRESH_SECONDS }),
    app,
    appPath: appPath(app),
    listPath: listPath(app),
    endpointPath: endpointPath(app, endpoint),
    endpointUrl: endpoint.url,
    path: deliveryPath(app, endpoint, delivery.id),
    delivery,
    waiting,
    payload,
    lastAttempt: delivery.last_attempt_at === null ? null : formatTime(delivery.last_attempt_at, session.user.timezone),
  });
}

async function save(request: FastifyRequest, reply: FastifyReply) {
  const { stores, config, clock } = request.server.ctx;
  const { session, app, endpoint } = endpointOf(request);
  const body = request.body as Form;
  const form = { url: text(body.url).trim(), events: values(body.events) };
  try {
    await updateEndpoint(stores.webhooks, config, endpoint.id, form, clock());
    return reply.redirect(`${endpointPath(app, endpoint)}?done=saved`, 303);
  } catch (error) {
    if (!(error instanceof EndpointInputError)) throw error;
    return sendDetail(reply, session, app, endpoint, { errors: fieldErrorOf(error), form }, 400);
  }
}

async function act(request: FastifyRequest, reply: FastifyReply) {
  const { stores, clock } = request.server.ctx;
  const { app, endpoint } = endpointOf(request);
  const action = (request.params as { action: string }).action;
  const done = (notice: string) => reply.redirect(`${endpointPath(app, endpoint)}?done=${notice}`, 303);
  switch (action) {
    case 'pause':
      await stores.webhooks.update(endpoint.id, { state: 'paused' }, clock());
      return done('paused');
    case 'resume':
      await stores.webhooks.update(endpoint.id, { state: 'active' }, clock());
      return done('resumed');
    case 'test': {
      // Its delivery's page, which reloads itself until the receiver answered.
      const deliveryId = await stores.webhooks.sendTest(endpoint.id, clock());
      return deliveryId ? reply.redirect(deliveryPath(app, endpoint, deliveryId), 303) : done('test');
    }
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
