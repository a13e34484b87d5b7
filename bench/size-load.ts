/**
 * Load 7 of `npm run bench` (issues 30 and 45, "Speed and size"): what a person-day weighs in the
 * database — the person's data, and the events the same uploads leave in an app's feed. PERSONS
 * made-up people (src/domain/synthetic-person.ts with a WEARABLE: heart rate every 20 s while awake,
 * each reading a few beats off the trend, once a minute asleep; calories with a decimal every
 * minute; sparse steps in walks and runs; a night's sleep in stages, most mornings a weighing), DAYS
 * days each, uploaded through the resource API of a running Stride on a fresh database by an app
 * holding every write scope, one request per UTC day and kind. A second app holds every read scope
 * of the same people, so that each upload leaves its events in that app's feed, as it would for
 * any app reading them. Then the growth, with indexes, of
 *
 * - the data tables (DATA_TABLES) and of `events` (EVENT_TABLES), separately: on SQLite the pages
 *   `dbstat` counts for each table and its indexes after `PRAGMA wal_checkpoint(TRUNCATE)` (and
 *   the file's growth, every table together); on PostgreSQL `pg_total_relation_size` of each;
 * - where the bytes are: on SQLite per table and index; on PostgreSQL per table its heap, indexes,
 *   TOAST (with its index) and free-space and visibility maps.
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { NIGHT_SHIFT_WORKER, OFFICE_WORKER, RUNNER, synthesizePerson, TRAVELLER, WEARABLE, type Life } from '../src/domain/synthetic-person.js';
import { EVENT_TYPE_COUNTS, eventsIn } from './lib/event-counts.js';
import { obtainTokens } from './lib/oauth-client.js';
import { uploadPerson, WRITE_SCOPES } from './lib/person-upload.js';
import { temporaryPostgresDatabase } from './lib/postgres.js';
import { stopServer } from './lib/processes.js';
import { cli, REDIRECT_URI, startStride, STRIDE_ENDPOINTS } from './lib/servers.js';

export const PERSONS = 5;
export const DAYS = 30;
/** The data tables of every kind (src/db/schema.ts). */
export const DATA_TABLES = ['series_days', 'sleep_sessions', 'body_weights'] as const;
/** What apps are told of the uploads: the feed (webhook messages would add theirs per endpoint). */
export const EVENT_TABLES = ['events'] as const;
/** The app that reads every kind of the people's data, and so hears of every upload. */
const READ_SCOPES = 'read_activity read_heartrate read_sleep read_body';

const LIVES: Life[] = [OFFICE_WORKER, RUNNER, NIGHT_SHIFT_WORKER, TRAVELLER, { ...OFFICE_WORKER, timezone: 'Australia/Sydney' }];

export interface SizeResult {
  dialect: 'sqlite' | 'postgres';
  /** The data tables with their indexes, per person-day. */
  bytesPerPersonDay: number;
  /** The events with their indexes, per person-day. */
  eventBytesPerPersonDay: number;
  /** Events written per person-day (one per upload and type the reading app hears of). */
  eventsPerPersonDay: number;
  /** Rows of `events` per person-day (one per upload the reading app hears of: its types together). */
  eventRowsPerPersonDay: number;
  /** SQLite: the file's growth per person-day, every table together; PostgreSQL: null. */
  fileBytesPerPersonDay: number | null;
  /** Growth per person-day of the data tables' parts (SQLite: table or index; PostgreSQL: table and heap, indexes, TOAST, maps). */
  parts: Record<string, number>;
  /** The same for the events. */
  eventParts: Record<string, number>;
  personDays: number;
  requests: number;
  records: number;
  uploadSeconds: number;
}

export interface Measured {
  /** The file, every table together (SQLite). */
  file: number | null;
  /** Bytes by part: `table` or `table/index` (SQLite), `table/heap|indexes|toast|maps` (PostgreSQL). */
  parts: Record<string, number>;
  events: number;
  eventRows: number;
}

export interface Measurer {
  measure(): Promise<Measured>;
  close(): Promise<void>;
}

export function sqliteMeasurer(file: string): Measurer {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return {
    async measure() {
      // The server is idle between the uploads and this; a checkpoint that finds a reader retries.
      for (let attempt = 0; ; attempt++) {
        const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        if (result!.busy === 0) break;
        if (attempt > 50) throw new Error('the WAL could not be checkpointed: a reader stayed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Each page counted for its table: an index's pages as `table/index`.
      const rows = db
        .prepare(`SELECT d.name AS name, m.tbl_name AS tbl, sum(d.pgsize) AS bytes FROM dbstat d JOIN sqlite_master m ON m.name = d.name GROUP BY d.name`)
        .all() as Array<{ name: string; tbl: string; bytes: number }>;
      const parts = Object.fromEntries(rows.map((row) => [row.name === row.tbl ? row.name : `${row.tbl}/${row.name}`, row.bytes]));
      const counted = eventsIn(db.prepare(EVENT_TYPE_COUNTS).all() as Array<{ types: number; n: number }>);
      return { file: statSync(file).size, parts, events: counted.events, eventRows: counted.rows };
    },
    async close() {
      db.close();
    },
  };
}

/** Per table (its partitions together), where pg_total_relation_size's bytes are: heap, indexes, TOAST with its index, and the maps. */
export async function postgresParts(reader: import('pg').Client): Promise<Record<string, number>> {
  const parts: Record<string, number> = {};
  for (const table of [...DATA_TABLES, ...EVENT_TABLES]) {
    const { rows } = await reader.query<{ total: string; heap: string; indexes: string; toast: string }>(
      // Summed over the table's partitions, if it has any (docs/decisions/0039-postgres-partitions.md):
      // a partitioned table's own relation holds no rows.
      `SELECT sum(pg_total_relation_size(c.oid)) AS total, sum(pg_relation_size(c.oid, 'main')) AS heap, sum(pg_indexes_size(c.oid)) AS indexes,
              sum(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) AS toast
         FROM (SELECT relid FROM pg_partition_tree($1::regclass) UNION SELECT $1::regclass) t JOIN pg_class c ON c.oid = t.relid`,
      [table],
    );
    const [total, heap, indexes, toast] = [rows[0]!.total, rows[0]!.heap, rows[0]!.indexes, rows[0]!.toast].map(Number) as [number, number, number, number];
    Object.assign(parts, { [`${table}/heap`]: heap, [`${table}/indexes`]: indexes, [`${table}/toast`]: toast, [`${table}/maps`]: total - heap - indexes - toast });
  }
  return parts;
}

/** The bytes of the parts of `tables`. */
const sumOf = (parts: Record<string, number>, tables: readonly string[]) =>
  Object.entries(parts).filter(([name]) => tables.includes(name.split('/')[0]!)).reduce((sum, [, bytes]) => sum + bytes, 0);

/**
 * The size row on a fresh database: `postgresUrl` for PostgreSQL (a temporary database on that
 * server), else a SQLite file in `workDir`.
 */
export async function measureSize(workDir: string, postgresUrl: string | undefined, log: (line: string) => void): Promise<SizeResult> {
  const dialect = postgresUrl ? 'postgres' : 'sqlite';
  const temporary = postgresUrl ? await temporaryPostgresDatabase(postgresUrl, 'size') : undefined;
  const databaseUrl = temporary ? temporary.url : `sqlite:${workDir}/size.sqlite`;
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const people = LIVES.slice(0, PERSONS).map((life, i) => ({ life, seed: i + 1, credentials: { username: `person${i + 1}@example.com`, password } }));
  let server: Awaited<ReturnType<typeof startStride>> | undefined;
  let measurer: Measurer | undefined;
  try {
    for (const { credentials } of people) await cli(databaseUrl, ['users', 'create', '--email', credentials.username, '--password', password]);
    const makeApp = (name: string, scopes: string) =>
      cli<{ client_id: string; client_secret: string }>(databaseUrl, ['apps', 'create', '--owner', people[0]!.credentials.username, '--name', name, '--redirect-uri', REDIRECT_URI, '--scopes', scopes.replaceAll(' ', ',')]);
    const writer = await makeApp('Device Sync', WRITE_SCOPES);
    const reader = await makeApp('Sleep Coach', READ_SCOPES);
    server = await startStride(databaseUrl, `Stride ${dialect} (size)`);
    const tokens: string[] = [];
    for (const { credentials } of people) {
      const tokenOf = async (app: { client_id: string; client_secret: string }, scope: string) => {
        const client = { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI };
        return (await obtainTokens(server!.origin, STRIDE_ENDPOINTS(server!.origin), client, credentials, { scope }, 1))[0]!.access_token;
      };
      tokens.push(await tokenOf(writer, WRITE_SCOPES));
      // The reader's grant is all it needs: from now on each upload leaves its events in its feed.
      await tokenOf(reader, READ_SCOPES);
    }
    measurer = temporary
      ? {
          async measure() {
            const counted = eventsIn((await temporary.reader.query<{ types: number; n: string }>(EVENT_TYPE_COUNTS)).rows);
            return { file: null, parts: await postgresParts(temporary.reader), events: counted.events, eventRows: counted.rows };
          },
          async close() {},
        }
      : sqliteMeasurer(`${workDir}/size.sqlite`);
    const before = await measurer.measure();
    // Whole days ending at the last UTC midnight, the same for every run of a day.
    const now = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 1;
    log(`load 7: uploading ${PERSONS} people × ${DAYS} days of every kind of data through the API (${dialect}), heard of by an app reading them…`);
    let requests = 0;
    let records = 0;
    const started = performance.now();
    for (const [i, person] of people.entries()) {
      const uploaded = await uploadPerson(server.origin, tokens[i]!, synthesizePerson(person.life, now, DAYS, person.seed, WEARABLE));
      requests += uploaded.requests;
      records += uploaded.records;
    }
    const uploadSeconds = (performance.now() - started) / 1000;
    const after = await measurer.measure();
    const personDays = PERSONS * DAYS;
    const grown: Record<string, number> = {};
    for (const name of new Set([...Object.keys(before.parts), ...Object.keys(after.parts)])) {
      const bytes = (after.parts[name] ?? 0) - (before.parts[name] ?? 0);
      if (bytes !== 0) grown[name] = bytes / personDays;
    }
    const partsOf = (tables: readonly string[]) => Object.fromEntries(Object.entries(grown).filter(([name]) => tables.includes(name.split('/')[0]!)));
    return {
      dialect,
      bytesPerPersonDay: (sumOf(after.parts, DATA_TABLES) - sumOf(before.parts, DATA_TABLES)) / personDays,
      eventBytesPerPersonDay: (sumOf(after.parts, EVENT_TABLES) - sumOf(before.parts, EVENT_TABLES)) / personDays,
      eventsPerPersonDay: (after.events - before.events) / personDays,
      eventRowsPerPersonDay: (after.eventRows - before.eventRows) / personDays,
      fileBytesPerPersonDay: after.file === null || before.file === null ? null : (after.file - before.file) / personDays,
      parts: partsOf(DATA_TABLES),
      eventParts: partsOf(EVENT_TABLES),
      personDays,
      requests,
      records,
      uploadSeconds,
    };
  } finally {
    await measurer?.close();
    if (server) await stopServer(server);
    await temporary?.drop();
  }
}
