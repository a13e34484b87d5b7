/**
 * An app's Fitbit-compatible subscriber on the dashboard (docs/migrating-from-fitbit.md,
 * "Subscriptions"): its URL, subscriber id and verification code, the client secret that signs its
 * notifications (entered here, checked, kept sealed), its state and delivery log, verifying it
 * again and removing it. Every change is POST-redirect-GET.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../store/apps.js';
import type { WebhookEndpoint } from '../../store/webhooks.js';
import { DEFAULT_SUBSCRIBER_ID, setSubscriber, SubscriberInputError } from '../../webhooks/fitbit-subscriber.js';
import { DRAFT_NOTICE, takeDraft } from '../form-drafts.js';
import { formatTime, signedInLayout, text, type Form } from '../forms.js';
import { appPath, ownedBy, pageAbove } from '../owned-app.js';
import type { Session } from '../session.js';
import { sendPage } from '../views.js';

const pagePath = (app: App) => `${appPath(app)}/fitbit-subscriber`;

const NOTICES: Record<string, string> = {
  saved: 'Saved. A new URL or verification code is verified before anything is sent to it.',
  verifying: 'Stride sends the verification requests again now.',
  removed: 'The subscriber was removed, with its subscriptions.',
};

type FieldErrors = Partial<Record<'url' | 'subscriber_id' | 'verification_code' | 'client_secret' | 'form', string>>;
interface SubscriberForm {
  url: string;
  subscriber_id: string;
  verification_code: string;
}

/** Registered in the app scope (owned-app.ts): the app is the signed-in person's own. */
export async function fitbitSubscriberPages(scope: FastifyInstance): Promise<void> {
  scope.get('/fitbit-subscriber', show);
  scope.post('/fitbit-subscriber', save);
  // The buttons are on the subscriber's page.
  scope.post('/fitbit-subscriber/verify', { config: { formPage: pageAbove } }, verifyAgain);
  scope.post('/fitbit-subscriber/remove', { config: { formPage: pageAbove } }, remove);
}

async function sendSubscriberPage(reply: FastifyReply, session: Session, app: App, options: { form?: SubscriberForm; errors?: FieldErrors; notice?: string | null }, status = 200) {
  const { stores, config } = reply.server.ctx;
  const subscriber = await stores.fitbitSubscriptions.subscriber(app.id);
  const deliveries = subscriber ? await stores.webhooks.deliveries(subscriber.id, 20) : [];
  const zone = session.user.timezone;
  return sendPage(reply, './fitbit-subscriber', {
    ...signedInLayout(session, `Fitbit-compatible subscriber of ${app.name}`, 'dashboard'),
    app,
    appPath: appPath(app),
    path: pagePath(app),
    subscriber,
    form: options.form ?? formOf(subscriber),
    errors: options.errors ?? {},
    notice: options.notice ?? null,
    allowPrivate: config.webhooks.allowPrivate,
    defaultSubscriberId: DEFAULT_SUBSCRIBER_ID,
    deliveries: deliveries.map((d) => ({ ...d, created: formatTime(d.created_at, zone), nextRetry: d.state === 'pending' && d.attempts > 0 ? formatTime(d.next_attempt_at, zone) : null })),
  }, status);
}

function formOf(subscriber: WebhookEndpoint | undefined): SubscriberForm {
  return { url: subscriber?.url ?? '', subscriber_id: subscriber?.fitbit_subscriber_id ?? '', verification_code: subscriber?.fitbit_verification_code ?? '' };
}

const formFrom = (body: Form): SubscriberForm => ({ url: text(body.url).trim(), subscriber_id: text(body.subscriber_id).trim(), verification_code: text(body.verification_code).trim() });

async function show(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  // The client secret is never kept in a draft (form-drafts.ts): it is typed again.
  const draft = await takeDraft(request, reply, session, pagePath(app));
  if (draft) return sendSubscriberPage(reply, session, app, { form: formFrom(draft), notice: DRAFT_NOTICE });
  return sendSubscriberPage(reply, session, app, { notice: NOTICES[text((request.query as Form).done)] ?? null });
}

async function save(request: FastifyRequest, reply: FastifyReply) {
  const { session, app } = ownedBy(request);
  const body = request.body as Form;
  const form = formFrom(body);
  try {
    await setSubscriber(request.server.ctx, app, { url: form.url, subscriberId: form.subscriber_id, verificationCode: form.verification_code, clientSecret: text(body.client_secret) });
    return reply.redirect(`${pagePath(app)}?done=saved`, 303);
  } catch (error) {
    if (!(error instanceof SubscriberInputError)) throw error;
    const sentence = error.message.charAt(0).toUpperCase() + error.message.slice(1) + '.';
    return sendSubscriberPage(reply, session, app, { form, errors: { [error.field ?? 'form']: sentence } }, 400);
  }
}

async function verifyAgain(request: FastifyRequest, reply: FastifyReply) {
  const { app } = ownedBy(request);
  await request.server.ctx.stores.fitbitSubscriptions.verifyAgain(app.id, request.server.ctx.clock());
  return reply.redirect(`${pagePath(app)}?done=verifying`, 303);
}

async function remove(request: FastifyRequest, reply: FastifyReply) {
  const { app } = ownedBy(request);
  await request.server.ctx.stores.fitbitSubscriptions.removeSubscriber(app.id);
  return reply.redirect(`${pagePath(app)}?done=removed`, 303);
}
