/**
 * Webhook endpoints and their deliveries (docs/webhooks.md). Every process runs a delivery worker;
 * a worker claims due deliveries (and verifications) by setting a lease, so that no two processes
 * send the same attempt at once (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: one writer), and a
 * claim of a process that died comes due again when its lease ends.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Db, Dialect } from '../db/database.js';
import type { Database, DeliveryState, WebhookDeliveryTable, WebhookEndpointFormat, WebhookEndpointState, WebhookEndpointTable } from '../db/schema.js';
import { isId } from './identifiers.js';
import { feedPage, type FeedPage } from './event-feed.js';
import { messageBody, newEventId, newMessageId } from './events.js';
import { withOwnerLocked } from './owner-lock.js';

type Q = Kysely<Database>;
export type WebhookEndpoint = Selectable<WebhookEndpointTable>;
export type WebhookDelivery = Selectable<WebhookDeliveryTable>;

/** A claimed message with what it takes to send it. */
export interface ClaimedMessage {
  /** The delivery's id, or for a verification the endpoint's id. */
  id: string;
  kind: 'delivery' | 'verification';
  /** `fitbit`: to a Fitbit-compatible subscriber, whose one secret is the app's client secret, sealed. */
  format: WebhookEndpointFormat;
  appId: string;
  endpointId: string;
  url: string;
  /** Secrets that sign it: the current one, and the previous one during its overlap. */
  secrets: string[];
  messageId: string;
  payload: string;
  attempts: number;
  createdAt: number;
  challenge: string | null;
}

/** What one attempt gave. */
export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** The first RESPONSE_BODY_KEPT_BYTES of the receiver's answer (a delivery's page shows it). */
  responseBody?: string;
  at: number;
  /** When to try again; null: give up. */
  retryAt: number | null;
}

export interface EndpointChanges {
  url?: string;
  eventTypes?: string[];
  state?: 'active' | 'paused';
}

export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const newEndpointId = () => `we_${randomBytes(12).toString('base64url')}`;
const newChallenge = () => randomBytes(24).toString('base64url');

export interface WebhookStore {
  /**
   * A new endpoint of the app, unless the app has `atMost` already (null): counted and inserted
   * under the app's lock (owner-lock.ts), so that parallel adds never pass the cap.
   * `showOnce`: the secret waits to be shown once by revealSecret (the dashboard's redirect target).
   * `id`: when the app has an endpoint of that id already (a form sent twice at once), that one.
   */
  add(appId: string, url: string, eventTypes: string[], now: number, options: { atMost: number; id?: string; showOnce?: boolean }): Promise<WebhookEndpoint | null>;
  /** The secret, if it still waits to be shown; marked shown. */
  revealSecret(id: string): Promise<string | undefined>;
  /** Per app: how many endpoints, and how many failing (the dashboard's overview). */
  summaries(appIds: readonly string[]): Promise<Map<string, { endpoints: number; failing: number }>>;
  /** The endpoint `id`; undefined for none, and without a look for an id that cannot be one (identifiers.ts). */
  find(id: string): Promise<WebhookEndpoint | undefined>;
  list(appId: string): Promise<WebhookEndpoint[]>;
  /** A URL change starts a new verification; pausing keeps deliveries waiting. */
  update(id: string, changes: EndpointChanges, now: number): Promise<WebhookEndpoint | undefined>;
  /** A new secret; the old one keeps signing beside it until `now + overlapSeconds`. */
  rotateSecret(id: string, now: number, overlapSeconds: number, options?: { showOnce?: boolean }): Promise<WebhookEndpoint | undefined>;
  delete(id: string): Promise<boolean>;
  /** The endpoint's latest deliveries, newest first. */
  deliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]>;
  /** Sends the delivery again now (a new attempt of the same message); false for no such delivery of the endpoint. */
  redeliver(endpointId: string, deliveryId: string, now: number): Promise<boolean>;
  /** A `webhook.test` message to the endpoint: its delivery's id, or false for no such endpoint. */
  sendTest(endpointId: string, now: number): Promise<string | false>;
  /** One delivery of the endpoint; undefined for none. */
  delivery(endpointId: string, deliveryId: string): Promise<WebhookDelivery | undefined>;
  /** Due deliveries and verifications, leased for `leaseSeconds`. */
  claim(now: number, leaseSeconds: number, limit: number): Promise<ClaimedMessage[]>;
  finish(message: ClaimedMessage, outcome: AttemptOutcome, retryFor: number): Promise<void>;
  feed(appId: string, cursor: string | null, limit: number): Promise<FeedPage | null>;
}

export function createWebhookStore(db: Db): WebhookStore {
  const q = db.kysely;
  // The endpoints an app manages here are the standard ones; its Fitbit-compatible subscriber is
  // store/fitbit-subscriptions.ts's.
  const standard = () => q.selectFrom('webhook_endpoints').where('format', '=', 'standard');
  const find = async (id: string) => (isId('webhookEndpoint', id) ? standard().selectAll().where('id', '=', id).executeTakeFirst() : undefined);
  return {
    async add(appId, url, eventTypes, now, options) {
      const row: WebhookEndpoint = {
        id: options.id ?? newEndpointId(),
        app_id: appId,
        url,
        event_types: eventTypes.join(' '),
        state: 'unverified',
        secret: newWebhookSecret(),
        previous_secret: null,
        previous_secret_until: null,
        secret_unshown: options.showOnce ? 1 : 0,
        challenge: newChallenge(),
        verify_at: now,
        verify_attempts: 0,
        verify_error: null,
        created_at: now,
        updated_at: now,
        format: 'standard',
        fitbit_subscriber_id: null,
        fitbit_verification_code: null,
      };
      return withOwnerLocked(db, { table: 'apps', id: appId }, async (trx) => {
        // A form sent twice at once names one id (pages/webhooks.ts): the second finds the first's row.
        if (options.id !== undefined) {
          const made = await trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', options.id).where('app_id', '=', appId).where('format', '=', 'standard').executeTakeFirst();
          if (made) return made;
        }
        const { n } = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('app_id', '=', appId).where('format', '=', 'standard').executeTakeFirstOrThrow();
        if (Number(n) >= options.atMost) return null;
        await trx.insertInto('webhook_endpoints').values(row).execute();
        return row;
      });
    },
    find,
    list: (appId) => standard().selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('id').execute(),
    async update(id, changes, now) {
      const current = await find(id);
      if (!current) return undefined;
      const set: Partial<WebhookEndpoint> = { updated_at: now };
      if (changes.eventTypes) set.event_types = changes.eventTypes.join(' ');
      if (changes.state === 'paused') set.state = 'paused';
      if (changes.state === 'active' && current.state === 'paused') set.state = current.challenge === null ? 'active' : 'unverified';
      if (changes.url !== undefined && changes.url !== current.url) {
        Object.assign(set, { url: changes.url, challenge: newChallenge(), verify_at: now, verify_attempts: 0, verify_error: null });
        // A new URL is verified before anything is sent to it: at once, unless the endpoint stays
        // paused (then when it is resumed, as its challenge is pending) — even when this very
        // change resumes it.
        if ((set.state ?? current.state) !== 'paused') set.state = 'unverified';
      }
      await q.updateTable('webhook_endpoints').set(set).where('id', '=', id).execute();
      return find(id);
    },
    async revealSecret(id) {
      const row = await q.updateTable('webhook_endpoints').set({ secret_unshown: 0 }).where('id', '=', id).where('secret_unshown', '=', 1).returning('secret').executeTakeFirst();
      return row?.secret;
    },
    async summaries(appIds) {
      const rows = appIds.length === 0 ? [] : await q
        .selectFrom('webhook_endpoints')
        .select(['app_id', (eb) => eb.fn.countAll<number>().as('endpoints'), (eb) => eb.fn.sum<number>(eb.case().when('state', '=', 'failing').then(1).else(0).end()).as('failing')])
        .where('app_id', 'in', appIds)
        .where('format', '=', 'standard')
        .groupBy('app_id')
        .execute();
      return new Map(rows.map((row) => [row.app_id, { endpoints: Number(row.endpoints), failing: Number(row.failing) }]));
    },
    async rotateSecret(id, now, overlapSeconds, options = {}) {
      const current = await find(id);
      if (!current) return undefined;
      await q
        .updateTable('webhook_endpoints')
        .set({ secret: newWebhookSecret(), previous_secret: current.secret, previous_secret_until: now + overlapSeconds, secret_unshown: options.showOnce ? 1 : 0, updated_at: now })
        .where('id', '=', id)
        .execute();
      return find(id);
    },
    async delete(id) {
      if (!isId('webhookEndpoint', id)) return false;
      const result = await q.deleteFrom('webhook_endpoints').where('id', '=', id).where('format', '=', 'standard').executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    deliveries: (endpointId, limit) =>
      q.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute(),
    async redeliver(endpointId, deliveryId, now) {
      if (!isId('webhookDelivery', deliveryId)) return false;
      const result = await q
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: now, lease_until: null })
        .where('id', '=', deliveryId)
        .where('endpoint_id', '=', endpointId)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async sendTest(endpointId, now) {
      const endpoint = await find(endpointId);
      if (!endpoint) return false;
      const data = { endpoint_id: endpointId, message: 'A test event sent from Stride.' };
      const id = newMessageId();
      await q
        .insertInto('webhook_deliveries')
        .values({ id, endpoint_id: endpointId, event_id: newEventId(), type: 'webhook.test', user_id: null, payload: messageBody('webhook.test', now, data), state: 'pending', attempts: 0, next_attempt_at: now, created_at: now })
        .execute();
      return id;
    },
    delivery: (endpointId, deliveryId) => q.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).where('id', '=', deliveryId).executeTakeFirst(),
    claim: (now, leaseSeconds, limit) => claim(q, db.dialect, now, leaseSeconds, limit),
    finish: (message, outcome, retryFor) => finish(q, message, outcome, retryFor),
    feed: (appId, cursor, limit) => feedPage(q, db.dialect, appId, cursor, limit),
  };
}

function secretsOf(endpoint: { secret: string; previous_secret: string | null; previous_secret_until: number | null }, now: number): string[] {
  const previous = endpoint.previous_secret;
  return previous !== null && (endpoint.previous_secret_until ?? 0) > now ? [endpoint.secret, previous] : [endpoint.secret];
}

/** Deliveries go only to endpoints that answered their verification and are not paused. */
const DELIVERING: WebhookEndpointState[] = ['active', 'failing'];

async function claim(q: Q, dialect: Dialect, now: number, leaseSeconds: number, limit: number): Promise<ClaimedMessage[]> {
  const lease = now + leaseSeconds;
  const skipLocked = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  return q.transaction().execute(async (trx) => {
    const deliveries = await sql<{ id: string }>`
      update webhook_deliveries set lease_until = ${lease}
      where id in (
        select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where d.state = 'pending' and d.next_attempt_at <= ${now} and (d.lease_until is null or d.lease_until <= ${now})
          and e.state in (${sql.join(DELIVERING)})
        order by d.next_attempt_at limit ${limit} ${skipLocked})
      returning id`.execute(trx);
    const verifications = await sql<{ id: string }>`
      update webhook_endpoints set verify_at = ${lease}
      where id in (
        select id from webhook_endpoints where state = 'unverified' and verify_at <= ${now}
        order by verify_at limit ${limit} ${skipLocked})
      returning id`.execute(trx);
    const claimed: ClaimedMessage[] = [];
    const deliveryIds = deliveries.rows.map((row) => row.id);
    if (deliveryIds.length > 0) {
      const rows = await trx
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .select(['d.id', 'd.endpoint_id', 'd.payload', 'd.attempts', 'd.created_at', 'e.url', 'e.secret', 'e.previous_secret', 'e.previous_secret_until', 'e.format', 'e.app_id'])
        .where('d.id', 'in', deliveryIds)
        .execute();
      for (const row of rows) {
        claimed.push({ id: row.id, kind: 'delivery', format: row.format, appId: row.app_id, endpointId: row.endpoint_id, url: row.url, secrets: secretsOf(row, now), messageId: row.id, payload: row.payload, attempts: row.attempts, createdAt: row.created_at, challenge: null });
      }
    }
    const endpointIds = verifications.rows.map((row) => row.id);
    if (endpointIds.length > 0) {
      const rows = await trx.selectFrom('webhook_endpoints').selectAll().where('id', 'in', endpointIds).execute();
      for (const row of rows) {
        const payload = messageBody('webhook.verification', now, { challenge: row.challenge });
        claimed.push({ id: row.id, kind: 'verification', format: row.format, appId: row.app_id, endpointId: row.id, url: row.url, secrets: secretsOf(row, now), messageId: newMessageId(), payload, attempts: row.verify_attempts, createdAt: row.updated_at, challenge: row.challenge });
      }
    }
    return claimed;
  });
}

async function finish(q: Q, message: ClaimedMessage, outcome: AttemptOutcome, retryFor: number): Promise<void> {
  const givingUp = !outcome.ok && (outcome.retryAt === null || outcome.retryAt - message.createdAt > retryFor);
  if (message.kind === 'verification') {
    await q
      .updateTable('webhook_endpoints')
      .set(
        outcome.ok
          ? { state: 'active', challenge: null, verify_at: null, verify_error: null, updated_at: outcome.at }
          : { verify_attempts: message.attempts + 1, verify_error: outcome.error, verify_at: givingUp ? null : outcome.retryAt },
      )
      .where('id', '=', message.id)
      .where('state', '=', 'unverified')
      // A URL changed meanwhile made a new challenge: this answer was for the old one.
      .where('challenge', '=', message.challenge)
      .execute();
    return;
  }
  const state: DeliveryState = outcome.ok ? 'succeeded' : givingUp ? 'failed' : 'pending';
  await q.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_deliveries')
      .set({
        state,
        attempts: message.attempts + 1,
        next_attempt_at: state === 'pending' ? outcome.retryAt! : outcome.at,
        lease_until: null,
        last_attempt_at: outcome.at,
        last_status: outcome.status,
        last_error: outcome.error,
        last_latency_ms: outcome.latencyMs,
        last_response_body: outcome.responseBody ?? null,
      })
      .where('id', '=', message.id)
      .execute();
    // An endpoint that failed a message for all of WEBHOOK_RETRY_FOR is failing until one succeeds.
    if (state === 'failed') await trx.updateTable('webhook_endpoints').set({ state: 'failing' }).where('id', '=', message.endpointId).where('state', '=', 'active').execute();
    if (state === 'succeeded') await trx.updateTable('webhook_endpoints').set({ state: 'active' }).where('id', '=', message.endpointId).where('state', '=', 'failing').execute();
  });
}
