/**
 * The whole data model: users, apps, grants, codes, tokens, sessions, steps and their rollups.
 * Portable to SQLite and PostgreSQL: text ids, bigint Unix seconds, 0/1 integers for booleans, no
 * dialect-specific defaults.
 */
import { SqliteAdapter, sql, type CreateTableBuilder, type Kysely } from 'kysely';

/**
 * Step tables are read by ranges of their primary key. On SQLite, WITHOUT ROWID stores the rows in
 * that key's B-tree itself (one tree to search and write instead of a table plus an index);
 * PostgreSQL has no such option and needs none here.
 */
function clusteredOnSqlite(db: Kysely<any>) {
  return <T extends string, C extends string>(builder: CreateTableBuilder<T, C>) =>
    db.getExecutor().adapter instanceof SqliteAdapter ? builder.modifyEnd(sql`without rowid`) : builder;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('daily_step_goal', 'integer', (c) => c.notNull().defaultTo(10000))
    .addColumn('stride_length_cm', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('client_secret_hash', 'text')
    .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('website_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('apps_owner_idx').on('apps').column('owner_id').execute();

  await db.schema
    .createTable('grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addUniqueConstraint('grants_user_app_unique', ['user_id', 'app_id'])
    .execute();
  await db.schema.createIndex('grants_app_idx').on('grants').column('app_id').execute();

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('grant_id', 'text', (c) => c.notNull().references('grants.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('authorization_codes_expires_idx').on('authorization_codes').column('expires_at').execute();
  await db.schema.createIndex('authorization_codes_grant_idx').on('authorization_codes').column('grant_id').execute();

  // Tokens are written on every refresh, so they carry only the indexes something reads: the
  // primary key (bearer check, refresh, introspection, revocation of one token), grant_id (the
  // cascade from grants, which itself cascades from apps and users; also how a code's or refresh
  // token's whole family is found, since revoking one is rare) and expires_at (the sweeper). The
  // key starts with the issue time (secrets.ts tokenKey), so new rows land at the end of the primary
  // key and of expires_at; an index on family_id would take a scattered page write per insert.
  // app_id and user_id are copies of the grant's, read with the row; they are not foreign keys,
  // since cascading through grant_id already ends every token of a deleted user or app, and a key
  // there would need an index each.
  for (const table of ['access_tokens', 'refresh_tokens'] as const) {
    let builder = db.schema
      .createTable(table)
      .addColumn('token_key', 'text', (c) => c.primaryKey())
      .addColumn('family_id', 'text', (c) => c.notNull())
      .addColumn('grant_id', 'text', (c) => c.notNull().references('grants.id').onDelete('cascade'))
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull());
    if (table === 'refresh_tokens') {
      builder = builder.addColumn('rotated_at', 'bigint').addColumn('replay_response', 'text');
    }
    await builder.execute();
    await db.schema.createIndex(`${table}_grant_idx`).on(table).column('grant_id').execute();
    await db.schema.createIndex(`${table}_expires_idx`).on(table).column('expires_at').execute();
  }

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('csrf_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('step_samples')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('minute_start', 'bigint', (c) => c.notNull())
    .addColumn('value', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('step_samples_pk', ['user_id', 'minute_start'])
    .$call(clusteredOnSqlite(db))
    .execute();

  await db.schema
    .createTable('step_rollups')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('bucket_start', 'bigint', (c) => c.notNull())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('step_rollups_pk', ['user_id', 'width', 'bucket_start'])
    .$call(clusteredOnSqlite(db))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'step_rollups', 'step_samples', 'sessions', 'refresh_tokens', 'access_tokens',
    'authorization_codes', 'grants', 'apps', 'users',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
