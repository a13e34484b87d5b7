/**
 * App usage (docs/web.md, "App usage"): what each process counted in memory, added to the day's
 * counters in one transaction per flush — additions, so processes sum — and what the dashboard reads.
 */
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { eventTimes } from './events.js';

type Q = Kysely<Database>;

/**
 * Who a counted request belongs to: an app by id (API requests), by client id, or by the key of a
 * refused access token (both to be resolved: the token's app, whether it still exists or was deleted).
 */
export type UsageOwner = { appId: string } | { clientId: string } | { tokenKey: string };

/** Keys of refused tokens looked up in one statement at most (well under either dialect's limit of parameters). */
const TOKEN_KEYS_PER_QUERY = 500;

export interface UsageBatch {
  counts: Array<{ owner: UsageOwner; day: string; metric: string; count: number }>;
  /** Highest counts seen, kept as the maximum rather than added (api.busiest_window). */
  peaks: Array<{ appId: string; day: string; metric: string; count: number }>;
  errors: Array<{ owner: UsageOwner; at: number; status: number; error: string; route: string }>;
}

export interface AppUsage {
  /** metric → count, per day. */
  days: Map<string, Map<string, number>>;
  errors: Array<{ at: number; status: number; error: string; route: string }>;
  /** grant.created and grant.revoked per day, from the app's events. */
  connections: Map<string, { created: number; revoked: number }>;
}

/** The last errors kept per app. */
export const KEPT_ERRORS = 20;

export interface UsageStore {
  add(batch: UsageBatch): Promise<void>;
  /** The app's usage from the UTC day `since` (YYYY-MM-DD) on. */
  forApp(appId: string, since: string, sinceSeconds: number): Promise<AppUsage>;
}

export function createUsageStore(db: Db): UsageStore {
  const q = db.kysely;
  return {
    add: (batch) => q.transaction().execute((trx) => addBatch(trx, batch)),
    forApp: (appId, since, sinceSeconds) => readUsage(q, appId, since, sinceSeconds),
  };
}

async function addBatch(trx: Q, batch: UsageBatch): Promise<void> {
  // Client ids no app has are dropped: naming a client counts nothing unless it exists.
  const clientIds = [...new Set([...batch.counts, ...batch.errors].flatMap(({ owner }) => ('clientId' in owner ? [owner.clientId] : [])))];
  const apps = clientIds.length === 0 ? [] : await trx.selectFrom('apps').select(['id', 'client_id']).where('client_id', 'in', clientIds).execute();
  const byClient = new Map(apps.map((app) => [app.client_id, app.id]));
  const byToken = await appsOfTokens(trx, [...new Set([...batch.counts, ...batch.errors].flatMap(({ owner }) => ('tokenKey' in owner ? [owner.tokenKey] : [])))]);
  const appOf = (owner: UsageOwner) => ('appId' in owner ? owner.appId : 'clientId' in owner ? byClient.get(owner.clientId) : byToken.get(owner.tokenKey));

  const added = new Map<string, { app_id: string; day: string; metric: string; count: number }>();
  for (const { owner, day, metric, count } of batch.counts) {
    const appId = appOf(owner);
    if (appId === undefined) continue;
    const key = `${appId} ${day} ${metric}`;
    const row = added.get(key);
    if (row) row.count += count;
    else added.set(key, { app_id: appId, day, metric, count });
  }
  // Rows of an app deleted since are skipped by the join (a foreign key would refuse them).
  for (const row of added.values()) {
    await trx
      .insertInto('app_usage')
      .columns(['app_id', 'day', 'metric', 'count'])
      .expression((eb) => eb.selectFrom('apps').select([eb.val(row.app_id).as('app_id'), eb.val(row.day).as('day'), eb.val(row.metric).as('metric'), eb.val(row.count).as('count')]).where('id', '=', row.app_id))
      .onConflict((oc) => oc.columns(['app_id', 'day', 'metric']).doUpdateSet({ count: sql`app_usage.count + excluded.count` }))
      .execute();
  }
  for (const row of batch.peaks) {
    await trx
      .insertInto('app_usage')
      .columns(['app_id', 'day', 'metric', 'count'])
      .expression((eb) => eb.selectFrom('apps').select([eb.val(row.appId).as('app_id'), eb.val(row.day).as('day'), eb.val(row.metric).as('metric'), eb.val(row.count).as('count')]).where('id', '=', row.appId))
      .onConflict((oc) => oc.columns(['app_id', 'day', 'metric']).doUpdateSet({ count: sql`case when excluded.count > app_usage.count then excluded.count else app_usage.count end` }))
      .execute();
  }
  const erring = new Set<string>();
  for (const { owner, at, status, error, route } of batch.errors) {
    const appId = appOf(owner);
    if (appId === undefined) continue;
    erring.add(appId);
    await trx
      .insertInto('app_usage_errors')
      .columns(['app_id', 'at', 'status', 'error', 'route'])
      .expression((eb) => eb.selectFrom('apps').select([eb.val(appId).as('app_id'), eb.val(at).as('at'), eb.val(status).as('status'), eb.val(error).as('error'), eb.val(route).as('route')]).where('id', '=', appId))
      .execute();
  }
  for (const appId of erring) {
    const kept = trx.selectFrom('app_usage_errors').select('id').where('app_id', '=', appId).orderBy('id', 'desc').limit(KEPT_ERRORS);
    await trx.deleteFrom('app_usage_errors').where('app_id', '=', appId).where('id', 'not in', kept).execute();
  }
}

/**
 * The app each access token was issued to: a live row (expired, or refused for its DPoP key), or the
 * row the deletion left (migration 017's trigger). A key in neither is no app's.
 */
async function appsOfTokens(trx: Q, keys: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let start = 0; start < keys.length; start += TOKEN_KEYS_PER_QUERY) {
    const some = keys.slice(start, start + TOKEN_KEYS_PER_QUERY);
    const rows = await trx
      .selectFrom('access_tokens')
      .select(['token_key', 'app_id'])
      .where('token_key', 'in', some)
      .unionAll(trx.selectFrom('ended_access_tokens').select(['token_key', 'app_id']).where('token_key', 'in', some))
      .execute();
    for (const row of rows) found.set(row.token_key, row.app_id);
  }
  return found;
}

async function readUsage(q: Q, appId: string, since: string, sinceSeconds: number): Promise<AppUsage> {
  const [counts, errors, events] = await Promise.all([
    q.selectFrom('app_usage').select(['day', 'metric', 'count']).where('app_id', '=', appId).where('day', '>=', since).execute(),
    q.selectFrom('app_usage_errors').select(['at', 'status', 'error', 'route']).where('app_id', '=', appId).orderBy('id', 'desc').limit(KEPT_ERRORS).execute(),
    eventTimes(q, appId, ['grant.created', 'grant.revoked'], sinceSeconds),
  ]);
  const days = new Map<string, Map<string, number>>();
  for (const row of counts) {
    if (!days.has(row.day)) days.set(row.day, new Map());
    days.get(row.day)!.set(row.metric, Number(row.count));
  }
  const connections = new Map<string, { created: number; revoked: number }>();
  for (const event of events) {
    const day = new Date(Number(event.created_at) * 1000).toISOString().slice(0, 10);
    const entry = connections.get(day) ?? { created: 0, revoked: 0 };
    if (event.type === 'grant.created') entry.created += 1;
    else entry.revoked += 1;
    connections.set(day, entry);
  }
  return { days, errors: errors.map((e) => ({ at: Number(e.at), status: Number(e.status), error: e.error, route: e.route })), connections };
}
