/**
 * Grants: a user's standing permission for an app (one row per user and app), and the ending of a
 * grant with every code and token issued under it (docs/oauth.md, "When tokens stop working").
 */
import { sql, type ExpressionBuilder, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import { preparedRead } from '../db/prepared-reads.js';
import type { Db, Dialect } from '../db/database.js';
import type { Database, GrantTable } from '../db/schema.js';
import { insertAuthorizationCode, type AuthorizationCode } from './codes.js';
import { approveDeviceCode } from './device-codes.js';
import { isId } from './identifiers.js';
import { holdsScope, scopeWordPattern } from './scope-words.js';
import { deleteEventsAbout, EVENT_TYPES_READ_WITH, recordEvent, SCOPED_EVENT_TYPES } from './events.js';
import { fitbitMessageTypesAbout } from './fitbit-notifications.js';
import { atomically } from './tokens.js';

type Q = Kysely<Database>;
export type Grant = Selectable<GrantTable>;

export interface ConnectedApp {
  appId: string;
  clientId: string;
  name: string;
  /** The owner's display name; null for an app that registered itself (RFC 7591), whose owner did not make it. */
  developer: string | null;
  scopes: string[];
  grantedAt: number;
  lastUsedAt: number | null;
}

/** A consent given on the consent page, and the code it answers with. */
export interface Consent {
  userId: string;
  appId: string;
  /** The id of the grant if the user has none yet. */
  newGrantId: string;
  /** The scopes ticked; each must still be registered for the app. */
  granted: readonly string[];
  /**
   * What the consent issues, bound to the grant once its id is known: an authorization code, or
   * the approval of a pending device request (RFC 8628 §3.3), whose hash is given.
   */
  issue: { code: Omit<AuthorizationCode, 'grant_id'> } | { deviceCodeHash: string; scope: string };
  now: number;
}

/** What a consent makes of the grant's scope before it: the new scope, and the scopes withdrawn. */
export type ConsentRule = (previousScope: string) => { grantScope: string; withdrawn: readonly string[] };

/** Why a grant ended, as its grant.revoked event says (docs/webhooks.md). */
export interface Revocation {
  reason: 'user_revoked' | 'scope_change' | 'token_reuse_detected' | 'account_deleted';
  now: number;
}

export interface GrantStore {
  find(userId: string, appId: string): Promise<Grant | undefined>;
  /** Reuse of a rotated refresh token: the grant ends with every code and token issued under it. */
  endForReuse(grantId: string, now: number): Promise<void>;
  /** The user revokes an app: its grant ends with every code and token; false when there was none. */
  revokeForUser(userId: string, appId: string, now: number): Promise<boolean>;
  /** The apps a user has granted access to, newest first. */
  listConnectedApps(userId: string): Promise<ConnectedApp[]>;
  /**
   * Records a consent and issues its code, all or nothing: checks that every granted scope is
   * still registered for the app (false if not, and nothing is written), applies `rule` to the
   * grant (created if new), ends the codes and tokens that carry a withdrawn scope, inserts the code.
   */
  recordConsent(consent: Consent, rule: ConsentRule): Promise<boolean>;
}

export function createGrantStore(db: Db): GrantStore {
  const q = db.kysely;
  // The authorization endpoint reads the grant for every consent page: with the other reads of the turn.
  const selectGrant = preparedRead<[string, string], Grant>(db, (k, userId, appId) =>
    k.selectFrom('grants').selectAll().where('user_id', '=', userId).where('app_id', '=', appId),
  );
  return {
    find: async (userId, appId) => (await selectGrant(userId, appId))[0],
    endForReuse: async (grantId, now) => {
      await deleteGrants(q, { id: grantId }, { reason: 'token_reuse_detected', now });
    },
    revokeForUser: async (userId, appId, now) => isId('app', appId) && (await deleteGrants(q, { userId, appId }, { reason: 'user_revoked', now })) > 0,
    async listConnectedApps(userId) {
      const rows = await q
        .selectFrom('grants as g')
        .innerJoin('apps as a', 'a.id', 'g.app_id')
        .innerJoin('users as o', 'o.id', 'a.owner_id')
        .select(['a.id', 'a.client_id', 'a.name', 'o.display_name', 'a.registration_token_hash', 'g.scope', 'g.updated_at', 'g.last_used_at'])
        .where('g.user_id', '=', userId)
        .orderBy('g.updated_at', 'desc')
        .orderBy('a.id')
        .execute();
      return rows.map((row) => ({
        appId: row.id,
        clientId: row.client_id,
        name: row.name,
        developer: row.registration_token_hash === null ? row.display_name : null,
        scopes: row.scope === '' ? [] : row.scope.split(' '),
        grantedAt: row.updated_at,
        lastUsedAt: row.last_used_at,
      }));
    },
    recordConsent: ({ userId, appId, newGrantId, granted, issue, now }, rule) =>
      q.transaction().execute(async (trx) => {
        // The request was checked against the app's scopes before; a developer may have narrowed
        // them since (docs/oauth.md, "When tokens stop working").
        const app = await lockedAppForConsent(trx, db.dialect, appId, userId);
        if (!app || granted.some((name) => !app.registered.includes(name))) return false;
        // Checked by the consent page before; here too, so that no path can ever break the rule.
        if (app.consentingTestPersonOf !== null && app.consentingTestPersonOf !== app.ownerId) throw new ForeignTestPersonError();
        const previous = await lockGrantForConsent(trx, { id: newGrantId, userId, appId }, now);
        const { grantScope, withdrawn } = rule(previous.scope);
        const grantId = await upsertGrant(trx, { id: previous.id, userId, appId, scope: grantScope }, now);
        if (grantId === newGrantId) {
          await recordEvent(trx, { type: 'grant.created', userId, appId, data: { scopes: grantScope.split(' ') }, now }, 0);
        }
        // A withdrawn scope takes effect now, not when the tokens carrying it expire: its tokens
        // end, and the app is sent no more messages about that data.
        await deleteGrantCredentialsWithScopes(trx, grantId, withdrawn);
        await dropMessagesAbout(trx, userId, appId, withdrawn.flatMap((scope) => EVENT_TYPES_READ_WITH[scope] ?? []));
        if ('code' in issue) await insertAuthorizationCode(trx, { ...issue.code, grant_id: grantId });
        else if (!(await approveDeviceCode(trx, issue.deviceCodeHash, { userId, grantId, scope: issue.scope, now }))) throw new DeviceRequestGone();
        return true;
      }).catch((error: unknown) => {
        if (error instanceof DeviceRequestGone) return false;
        throw error;
      }),
  };
}

/**
 * A test person may consent only to their own developer's apps
 * (docs/decisions/0024-test-people.md).
 */
export class ForeignTestPersonError extends Error {
  constructor() {
    super('a test person can hold grants only for the apps of the developer who owns them');
  }
}

/** Rolls a device approval back: the request expired, or was answered, meanwhile. */
class DeviceRequestGone extends Error {}

/**
 * What a consent being recorded needs of its app, in its transaction and one read: the registered
 * scopes, the owner, and whose test person the consenting user is (null: a person of their own;
 * also null when there is no such user). On PostgreSQL the app's row is share-locked until the
 * consent commits, so a developer's change of the scopes (an UPDATE of the row) and the consent
 * happen one after the other: the change ends the consent's grant if its set differs, or the
 * consent sees the new set. SQLite runs one write transaction at a time.
 */
async function lockedAppForConsent(
  db: Q,
  dialect: Dialect,
  appId: string,
  userId: string,
): Promise<{ registered: string[]; ownerId: string; consentingTestPersonOf: string | null } | undefined> {
  const [row] = (await (dialect === 'postgres' ? selectConsentAppForShare : selectConsentApp)(db, userId, appId)).rows;
  return row && { registered: row.scopes === '' ? [] : row.scopes.split(' '), ownerId: row.owner_id, consentingTestPersonOf: row.test_person_owner_id };
}

const consentApp = (db: Q, userId: string, appId: string) =>
  db
    .selectFrom('apps as a')
    .leftJoin('users as u', (join) => join.on('u.id', '=', userId))
    .select(['a.scopes', 'a.owner_id', 'u.test_person_owner_id'])
    .where('a.id', '=', appId);
const selectConsentApp = preparedQuery(consentApp);
const selectConsentAppForShare = preparedQuery((db: Q, userId: string, appId: string) => consentApp(db, userId, appId).forShare('a'));

/** The ids of the grants to end, as a subquery. */
type GrantIds = (db: Q) => SelectQueryBuilder<Database, 'grants', { id: string }>;

/**
 * Ends every code and token of the grants `grantIds` selects, before the grants themselves go.
 * The foreign keys would cascade from a deleted grant to its codes and tokens, but in the opposite
 * order to a refresh racing it, which locks its old token first and the grant last (the
 * foreign-key check of the pair it inserts, at the end of its statement): on PostgreSQL the two
 * deadlock, and one fails after deadlock_timeout. Deleted first, the way a code exchange and a
 * refresh lock them, the rows make a racing exchange or refresh wait and then find nothing, or
 * finish first. The refresh tokens go again until a DELETE finds none (see deleteTokenFamily in
 * tokens.ts): under READ COMMITTED a DELETE that waited for a rotation does not see the pair that
 * rotation inserted.
 */
async function deleteCredentialsOfGrants(db: Q, grantIds: GrantIds): Promise<void> {
  await db.deleteFrom('authorization_codes').where('grant_id', 'in', grantIds(db)).execute();
  let deleted: bigint;
  do {
    deleted = (await db.deleteFrom('refresh_tokens').where('grant_id', 'in', grantIds(db)).executeTakeFirst()).numDeletedRows;
  } while (deleted > 0n);
  await db.deleteFrom('access_tokens').where('grant_id', 'in', grantIds(db)).execute();
}

/** Which grants to end: every condition given must hold. */
interface GrantFilter {
  id?: string;
  appId?: string;
  userId?: string;
  /** Grants whose scope string is not this one. */
  scopeOtherThan?: string;
}

const matching = (f: GrantFilter) => (eb: ExpressionBuilder<Database, 'grants'>) =>
  eb.and([
    ...(f.id === undefined ? [] : [eb('id', '=', f.id)]),
    ...(f.appId === undefined ? [] : [eb('app_id', '=', f.appId)]),
    ...(f.userId === undefined ? [] : [eb('user_id', '=', f.userId)]),
    ...(f.scopeOtherThan === undefined ? [] : [eb('scope', '!=', f.scopeOtherThan)]),
  ]);

/**
 * The app no longer reads the user's data of these types (docs/webhooks.md, "Events": an app hears
 * of it only while it holds the scope): its messages about it go, whatever their state — a waiting
 * one is not sent, and one that failed or was sent cannot be sent again ("Redeliver") — and so do
 * the events its feed would replay.
 */
async function dropMessagesAbout(db: Q, userId: string, appId: string, types: readonly string[]): Promise<void> {
  if (types.length === 0) return;
  await db
    .deleteFrom('webhook_deliveries')
    .where('user_id', '=', userId)
    // Fitbit-compatible notifications about that data too (store/fitbit-notifications.ts).
    .where('type', 'in', [...types, ...fitbitMessageTypesAbout(types)])
    .where('endpoint_id', 'in', (eb) => eb.selectFrom('webhook_endpoints').select('id').where('app_id', '=', appId))
    .execute();
  await deleteEventsAbout(db, appId, userId, types);
}

/**
 * Ends the grants `filter` selects with every code and token issued under them; returns how many
 * grants. With a `revocation`, each app hears of it (grant.revoked), and its messages and feed
 * events about the user's data and profile are dropped: it no longer holds the grant to read them.
 */
export function deleteGrants(db: Q, filter: GrantFilter, revocation?: Revocation): Promise<number> {
  return atomically(db, async (trx) => {
    const ended = revocation ? await trx.selectFrom('grants').select(['id', 'user_id', 'app_id']).where(matching(filter)).execute() : [];
    await deleteCredentialsOfGrants(trx, (q) => q.selectFrom('grants').select('id').where(matching(filter)));
    const result = await trx.deleteFrom('grants').where(matching(filter)).executeTakeFirst();
    for (const grant of ended) {
      await dropMessagesAbout(trx, grant.user_id, grant.app_id, SCOPED_EVENT_TYPES);
      const event = { type: 'grant.revoked', userId: grant.user_id, appId: grant.app_id, data: { reason: revocation!.reason }, now: revocation!.now } as const;
      await recordEvent(trx, event, 0);
    }
    return Number(result.numDeletedRows);
  });
}

export async function countGrantsWithOtherScope(db: Q, appId: string, scope: string): Promise<number> {
  const row = await db
    .selectFrom('grants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .where('scope', '!=', scope)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A user narrowed their consent: the grant's codes not yet exchanged and its access and refresh
 * tokens that carry any of `dropped` end now (on every process: the rows are deleted), and a device
 * request approved with one but not yet redeemed is denied (its device hears access_denied, RFC 8628
 * §3.5). Tokens whose scopes are all still granted keep working.
 */
async function deleteGrantCredentialsWithScopes(db: Q, grantId: string, dropped: readonly string[]): Promise<void> {
  if (dropped.length === 0) return;
  const carriesDropped = dropped.map((scope) => holdsScope('scope', scopeWordPattern(scope)));
  const anyDropped = sql<boolean>`(${sql.join(carriesDropped, sql` or `)})`;
  await db.deleteFrom('access_tokens').where('grant_id', '=', grantId).where(anyDropped).execute();
  await db.deleteFrom('refresh_tokens').where('grant_id', '=', grantId).where(anyDropped).execute();
  await db.deleteFrom('authorization_codes').where('grant_id', '=', grantId).where('consumed_at', 'is', null).where(anyDropped).execute();
  await db.updateTable('device_codes').set({ status: 'denied' }).where('grant_id', '=', grantId).where('status', '=', 'approved').where(anyDropped).execute();
}

/**
 * The user's grant for an app, locked until the transaction ends, for a consent to change it:
 * created with no scope when there is none (the consent gives it one before committing). Two
 * consents sent at once (a double click, two tabs) are so decided one after the other, the second
 * seeing the scopes the first left, as the withdrawal rule needs (ConsentRule); a
 * plain read would let both start from the same scopes. Returns the grant's id and its scope
 * before this consent ('' for a new grant).
 */
async function lockGrantForConsent(db: Q, grant: { id: string; userId: string; appId: string }, now: number): Promise<{ id: string; scope: string }> {
  const { rows } = await lockGrantRow(db, grant.id, grant.userId, grant.appId, '', now, now, now);
  return rows[0]!;
}

const lockGrantRow = preparedQuery(
  (db: Q, id: string, userId: string, appId: string, noScope: string, createdAt: number, updatedAt: number, touchedAt: number) =>
    db
      .insertInto('grants')
      .values({ id, user_id: userId, app_id: appId, scope: noScope, created_at: createdAt, updated_at: updatedAt, last_used_at: null })
      // An update, even of nothing that matters, locks the row (PostgreSQL waits here for another
      // consent's transaction to end); SQLite runs one write transaction at a time anyway.
      .onConflict((oc) => oc.columns(['user_id', 'app_id']).doUpdateSet({ updated_at: touchedAt }))
      .returning(['id', 'scope']),
);

/**
 * Records a user's consent for an app (one row per user and app). The grant's scope set becomes
 * `grant.scope` (what the ConsentRule made of the consent page); returns the grant's id.
 */
async function upsertGrant(
  db: Q,
  grant: { id: string; userId: string; appId: string; scope: string },
  now: number,
): Promise<string> {
  const { rows } = await upsertGrantRow(db, grant.id, grant.userId, grant.appId, grant.scope, now, now, grant.scope, now);
  return rows[0]!.id;
}

const upsertGrantRow = preparedQuery(
  (db: Q, id: string, userId: string, appId: string, scope: string, createdAt: number, updatedAt: number, newScope: string, newUpdatedAt: number) =>
    db
      .insertInto('grants')
      .values({ id, user_id: userId, app_id: appId, scope, created_at: createdAt, updated_at: updatedAt, last_used_at: null })
      .onConflict((oc) => oc.columns(['user_id', 'app_id']).doUpdateSet({ scope: newScope, updated_at: newUpdatedAt }))
      // The row inserted or updated: an existing grant keeps its id.
      .returning('id'),
);
