import { sql, type Kysely, type Selectable } from 'kysely';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, GrantTable } from '../db/schema.js';
import { isAppIdSyntax } from './apps.js';

type Q = Kysely<Database>;
export type Grant = Selectable<GrantTable>;

const selectGrant = preparedQuery((db: Q, userId: string, appId: string) =>
  db.selectFrom('grants').selectAll().where('user_id', '=', userId).where('app_id', '=', appId),
);

export async function findGrant(db: Q, userId: string, appId: string): Promise<Grant | undefined> {
  return (await selectGrant(db, userId, appId)).rows[0];
}

/** Deleting a grant cascades to every code and token issued under it. */
export async function deleteGrant(db: Q, grantId: string): Promise<void> {
  await db.deleteFrom('grants').where('id', '=', grantId).execute();
}

/** Grants of an app whose scope set differs from `scope` (SPEC §3.3). */
export async function countGrantsWithOtherScope(db: Q, appId: string, scope: string): Promise<number> {
  const row = await db
    .selectFrom('grants')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', appId)
    .where('scope', '!=', scope)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteGrantsWithOtherScope(db: Q, appId: string, scope: string): Promise<number> {
  const result = await db
    .deleteFrom('grants')
    .where('app_id', '=', appId)
    .where('scope', '!=', scope)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * A user narrowed their consent: the grant's codes not yet exchanged and its access and refresh
 * tokens that carry any of `dropped` end now (on every process: the rows are deleted). Tokens whose
 * scopes are all still granted keep working. Scope strings are space-separated scope names; the
 * names are matched as whole words (`_` escaped, since LIKE reads it as a wildcard).
 */
export async function deleteGrantCredentialsWithScopes(db: Q, grantId: string, dropped: readonly string[]): Promise<void> {
  if (dropped.length === 0) return;
  const carriesDropped = dropped.map((scope) => {
    const pattern = `% ${scope.replace(/[\\%_]/g, (c) => `\\${c}`)} %`;
    return sql<boolean>`(' ' || scope || ' ') like ${pattern} escape '\\'`;
  });
  const anyDropped = sql<boolean>`(${sql.join(carriesDropped, sql` or `)})`;
  await db.deleteFrom('access_tokens').where('grant_id', '=', grantId).where(anyDropped).execute();
  await db.deleteFrom('refresh_tokens').where('grant_id', '=', grantId).where(anyDropped).execute();
  await db.deleteFrom('authorization_codes').where('grant_id', '=', grantId).where('consumed_at', 'is', null).where(anyDropped).execute();
}

/**
 * Records a user's consent for an app (one row per user and app). The grant's scope set becomes
 * `grant.scope` (what `consentOutcome` made of the consent page); returns the grant's id.
 */
export async function upsertGrant(
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

/** Ends a user's grant for an app; its codes and tokens go with it (foreign-key cascade). */
export async function deleteGrantOfUser(db: Q, userId: string, appId: string): Promise<boolean> {
  if (!isAppIdSyntax(appId)) return false;
  const result = await db
    .deleteFrom('grants')
    .where('user_id', '=', userId)
    .where('app_id', '=', appId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
