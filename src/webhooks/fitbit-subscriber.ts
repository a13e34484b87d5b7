/**
 * Setting an app's Fitbit-compatible subscriber, as the dashboard and the CLI do it
 * (docs/migrating-from-fitbit.md, "Subscriptions"): its URL (a webhook target like any, targets.ts),
 * its subscriber id (what `X-Fitbit-Subscriber-Id` names; "1" unless set), its verification code
 * (made by Stride, or the one the developer's receiver already knows from Fitbit), and the app's
 * client secret, which signs the notifications and is kept sealed (domain/sealed-client-secrets.ts).
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { sealClientSecret } from '../domain/sealed-client-secrets.js';
import { constantTimeEqual, hashCredential } from '../security/secrets.js';
import type { App } from '../store/apps.js';
import type { WebhookEndpoint } from '../store/webhooks.js';
import { targetProblem } from './targets.js';

/** A rule of subscribers broken by the input; `field` names the field it is about. */
export class SubscriberInputError extends Error {
  constructor(message: string, readonly field: 'url' | 'subscriber_id' | 'verification_code' | 'client_secret' | null = null) {
    super(message);
  }
}

/** The subscriber id of an app that set none: Fitbit's first subscriber's. */
export const DEFAULT_SUBSCRIBER_ID = '1';
const SUBSCRIBER_ID = /^[A-Za-z0-9._-]{1,50}$/;
/** Fitbit's codes are 64 hex digits; one at least 8 characters long is hard enough to stumble on. */
const VERIFICATION_CODE = /^[A-Za-z0-9._-]{8,128}$/;

export const newVerificationCode = () => randomBytes(32).toString('hex');

export interface SubscriberInput {
  url: string;
  /** Kept (or "1" for a new subscriber) when absent or blank. */
  subscriberId?: string;
  /** Kept (or made for a new subscriber) when absent or blank. */
  verificationCode?: string;
  /** The app's current client secret: needed for a new subscriber, else kept when absent or blank. */
  clientSecret?: string;
}

type Needs = Pick<AppContext, 'stores' | 'config' | 'clock'>;

/** Sets `app`'s subscriber (made when it has none); a new URL or code is verified before anything is sent to it. */
export async function setSubscriber(ctx: Needs, app: App, input: SubscriberInput): Promise<WebhookEndpoint> {
  if (app.isPublic) throw new SubscriberInputError('a public app has no client secret to sign notifications with; a Fitbit-compatible subscriber needs a confidential app');
  const url = input.url.trim();
  const problem = targetProblem(url, ctx.config.webhooks.allowPrivate);
  if (problem) throw new SubscriberInputError(problem, 'url');
  const current = await ctx.stores.fitbitSubscriptions.subscriber(app.id);
  const subscriberId = input.subscriberId?.trim() || current?.fitbit_subscriber_id || DEFAULT_SUBSCRIBER_ID;
  if (!SUBSCRIBER_ID.test(subscriberId)) throw new SubscriberInputError('the subscriber id must be 1 to 50 letters, digits, dots, dashes or underscores', 'subscriber_id');
  const verificationCode = input.verificationCode?.trim() || current?.fitbit_verification_code || newVerificationCode();
  if (!VERIFICATION_CODE.test(verificationCode)) throw new SubscriberInputError('the verification code must be 8 to 128 letters, digits, dots, dashes or underscores', 'verification_code');
  const clientSecret = input.clientSecret?.trim() || undefined;
  if (clientSecret === undefined && !current) {
    throw new SubscriberInputError('enter the app\'s client secret: notifications are signed with it, as Fitbit signs them (lost it? rotate it on the app\'s page first)', 'client_secret');
  }
  if (clientSecret !== undefined && !constantTimeEqual(hashCredential(clientSecret), app.clientSecretHash ?? '')) {
    throw new SubscriberInputError('that is not the app\'s current client secret', 'client_secret');
  }
  const sealedSecret = clientSecret === undefined ? undefined : await sealClientSecret(ctx.stores, ctx.clock, app.id, clientSecret);
  return ctx.stores.fitbitSubscriptions.setSubscriber(app.id, { url, subscriberId, verificationCode, ...(sealedSecret !== undefined && { sealedSecret }) }, ctx.clock());
}

/** A subscriber as the CLI shows it: never its secret. */
export function publicSubscriber(subscriber: WebhookEndpoint) {
  return {
    url: subscriber.url,
    subscriber_id: subscriber.fitbit_subscriber_id,
    state: subscriber.state,
    verification_code: subscriber.fitbit_verification_code,
    ...(subscriber.state === 'unverified' && { verification_error: subscriber.verify_error }),
    created_at: subscriber.created_at,
  };
}
