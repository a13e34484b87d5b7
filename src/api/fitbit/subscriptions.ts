/**
 * Fitbit's subscriptions (docs/migrating-from-fitbit.md, "Subscriptions"):
 * `POST`, `GET` and `DELETE /1/user/-/[{collection}/]apiSubscriptions/{subscription-id}.json` and the
 * list, `GET /1/user/-/[{collection}/]apiSubscriptions.json`, for `activities`, `body`, `sleep` and
 * `userRevokedAccess` (none: all of them). A subscription is the app's, of the token's person, under
 * the id the app chose; its notifications go to the app's Fitbit-compatible subscriber, which
 * `X-Fitbit-Subscriber-Id` may name. A new subscription is 201, the same one again 200, an id the
 * app uses for another subscription (another person's, another collection's) or a collection the
 * person already has under another id 409; a delete is 204.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ALL_COLLECTIONS, FITBIT_COLLECTIONS, type FitbitCollection, type FitbitSubscription } from '../../store/fitbit-subscriptions.js';
import type { WebhookEndpoint } from '../../store/webhooks.js';
import { insufficientScope } from '../bearer.js';
import { FitbitError, validation } from './errors.js';
import { DELETED, described, fitbitRoute } from './route-schema.js';

/** The scopes a token needs for a collection: Fitbit's, as Stride names them. */
const SCOPES_OF: Readonly<Record<FitbitCollection, readonly string[]>> = {
  activities: ['read_activity'],
  body: ['read_body'],
  sleep: ['read_sleep'],
  userRevokedAccess: [],
};
/** Every collection's, for a subscription to all of them (Fitbit asks all its scopes). */
const ALL_SCOPES = [...new Set(Object.values(SCOPES_OF).flat())];

/** Fitbit's limit. */
const SUBSCRIPTION_ID = /^[\x21-\x7e]{1,50}$/;

interface SubscriptionParams {
  userId: string;
  collection?: string;
  subscriptionId?: string;
}

/** The collection the path names (ALL_COLLECTIONS: none), once the token may use it. */
function collectionOf(request: FastifyRequest): string {
  const { collection } = request.params as SubscriptionParams;
  if (collection !== undefined && !(FITBIT_COLLECTIONS as readonly string[]).includes(collection)) {
    throw validation('collection-path', `Stride holds no collection "${collection.slice(0, 40)}": the collections are ${FITBIT_COLLECTIONS.join(', ')}, or none for all of them.`);
  }
  const needed = collection === undefined ? ALL_SCOPES : SCOPES_OF[collection as FitbitCollection];
  const missing = needed.find((scope) => !request.auth.scopes.includes(scope));
  if (missing !== undefined) throw insufficientScope(missing);
  return collection ?? ALL_COLLECTIONS;
}

function subscriptionIdOf(request: FastifyRequest): string {
  const { subscriptionId } = request.params as SubscriptionParams;
  if (subscriptionId === undefined || !SUBSCRIPTION_ID.test(subscriptionId)) {
    throw validation('subscription-id', 'A subscription id is 1 to 50 printable characters, without spaces.');
  }
  return subscriptionId;
}

function subscriptionAnswer(description: string): object {
  const text = { type: 'string' };
  return described(description, { collectionType: text, ownerId: text, ownerType: text, subscriberId: text, subscriptionId: text });
}

/** Fitbit's answer for a subscription; one to all collections is of the collection type `user`. */
function view(subscription: Pick<FitbitSubscription, 'collection' | 'user_id' | 'subscription_id'>, subscriber: WebhookEndpoint) {
  return {
    collectionType: subscription.collection === ALL_COLLECTIONS ? 'user' : subscription.collection,
    ownerId: subscription.user_id,
    ownerType: 'user',
    subscriberId: subscriber.fitbit_subscriber_id,
    subscriptionId: subscription.subscription_id,
  };
}

export async function subscriptionRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;

  /** The app's subscriber, the one `X-Fitbit-Subscriber-Id` names when sent; undefined when the app has none. */
  async function subscriberOf(request: FastifyRequest): Promise<WebhookEndpoint | undefined> {
    const subscriber = await stores.fitbitSubscriptions.subscriber(request.auth.appId);
    const named = request.headers['x-fitbit-subscriber-id'];
    if (subscriber && typeof named === 'string' && named !== subscriber.fitbit_subscriber_id) {
      throw validation('X-Fitbit-Subscriber-Id', `This application has no subscriber "${named.slice(0, 50)}"; its subscriber is "${subscriber.fitbit_subscriber_id}".`);
    }
    return subscriber;
  }

  const notFound = () => new FitbitError(404, 'not_found', 'This application has no such subscription of this person.', 'subscription-id');

  async function create(request: FastifyRequest, reply: FastifyReply) {
    const collection = collectionOf(request);
    const subscriptionId = subscriptionIdOf(request);
    const subscriber = await subscriberOf(request);
    if (!subscriber) {
      throw validation('X-Fitbit-Subscriber-Id', 'This application has no Fitbit-compatible subscriber yet: its developer sets one on the app\'s Webhooks page of the dashboard, or with `stride apps fitbit-subscriber`.');
    }
    const subscription = { appId: request.auth.appId, endpointId: subscriber.id, userId: request.auth.userId, collection, subscriptionId };
    const outcome = await stores.fitbitSubscriptions.subscribe(subscription, clock());
    if (outcome === 'conflict') {
      throw new FitbitError(409, 'validation', 'This application uses this subscription id for another subscription, or this person\'s collection already has a subscription under another id.', 'subscription-id');
    }
    return reply.code(outcome === 'created' ? 201 : 200).send(view({ collection, user_id: request.auth.userId, subscription_id: subscriptionId }, subscriber));
  }

  async function show(request: FastifyRequest) {
    const collection = collectionOf(request);
    const subscriptionId = subscriptionIdOf(request);
    const subscriber = await subscriberOf(request);
    const found = subscriber && (await stores.fitbitSubscriptions.find(request.auth.appId, request.auth.userId, collection, subscriptionId));
    if (!subscriber || !found) throw notFound();
    return view(found, subscriber);
  }

  async function remove(request: FastifyRequest, reply: FastifyReply) {
    const collection = collectionOf(request);
    const subscriptionId = subscriptionIdOf(request);
    const subscriber = await subscriberOf(request);
    if (!subscriber || !(await stores.fitbitSubscriptions.unsubscribe(request.auth.appId, request.auth.userId, collection, subscriptionId))) throw notFound();
    return reply.code(204).send();
  }

  async function list(request: FastifyRequest) {
    const collection = collectionOf(request);
    const subscriber = await subscriberOf(request);
    // Without a collection, every subscription of the person; with one, that collection's.
    const found = subscriber ? await stores.fitbitSubscriptions.list(request.auth.appId, request.auth.userId, collection === ALL_COLLECTIONS ? undefined : collection) : [];
    return { apiSubscriptions: found.map((subscription) => view(subscription, subscriber!)) };
  }

  for (const [prefix, which] of [['/1/user/:userId', 'all collections'], ['/1/user/:userId/:collection', 'one collection']] as const) {
    const one = `${prefix}/apiSubscriptions/:subscriptionId.json`;
    const made = { 201: subscriptionAnswer('The subscription made'), 200: subscriptionAnswer('This very subscription, made before') };
    app.post(one, fitbitRoute(`Subscribe to the person's ${which} (Fitbit's create subscription)`, made, [400, 409]), create);
    app.get(one, fitbitRoute(`A subscription to the person's ${which}`, { 200: subscriptionAnswer('The subscription') }), show);
    app.delete(one, fitbitRoute(`End a subscription to the person's ${which} (Fitbit's delete subscription)`, DELETED), remove);
    const listed = { 200: described('The app\'s subscriptions of the person, oldest first', { apiSubscriptions: { type: 'array', items: subscriptionAnswer('A subscription') } }) };
    app.get(`${prefix}/apiSubscriptions.json`, fitbitRoute(`The app's subscriptions to the person's ${which} (Fitbit's subscription list)`, listed, [400]), list);
  }
}
