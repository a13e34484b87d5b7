/**
 * Load 7 of `npm run bench` (issue 30, "Speed and size"): what a person-day of every kind of data
 * weighs in the database. PERSONS made-up people (src/domain/synthetic-person.ts: steps, calories
 * and heart rate every minute of their waking hours and nights, a night's sleep in stages, most
 * mornings a weighing), DAYS days each, uploaded through the resource API of a running Stride on a
 * fresh database with a token of every write scope, then the database's growth with its indexes:
 *
 * - SQLite: the file's size after `PRAGMA wal_checkpoint(TRUNCATE)`, before and after the uploads
 *   (every table, and the breakdown by table and index from `dbstat`);
 * - PostgreSQL: `pg_total_relation_size` (heap, indexes, TOAST, free-space and visibility maps)
 *   of the data tables, before and after.
 *
 * The uploading app's grant holds only write scopes, so no app hears of the uploads: the events
 * table does not grow (events are what an app reads, not the person's data).
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { NIGHT_SHIFT_WORKER, OFFICE_WORKER, RUNNER, synthesizePerson, TRAVELLER, type Life } from '../src/domain/synthetic-person.js';
import { obtainTokens } from './lib/oauth-client.js';
import { uploadPerson, WRITE_SCOPES } from './lib/person-upload.js';
import { temporaryPostgresDatabase } from './lib/postgres.js';
import { stopServer } from './lib/processes.js';
import { cli, REDIRECT_URI, startStride, STRIDE_ENDPOINTS } from './lib/servers.js';

export const PERSONS = 5;
export const DAYS = 30;
/** The data tables of every kind (src/db/schema.ts). */
export const DATA_TABLES = ['series_days', 'sleep_sessions', 'body_weights'] as const;

const LIVES: Life[] = [OFFICE_WORKER, RUNNER, NIGHT_SHIFT_WORKER, TRAVELLER, { ...OFFICE_WORKER, timezone: 'Australia/Sydney' }];

export interface SizeResult {
  dialect: 'sqlite' | 'postgres';
  bytesPerPersonDay: number;
  /** Growth per person-day by table or index (SQLite: dbstat; PostgreSQL: per data table). */
  parts: Record<string, number>;
  personDays: number;
  requests: number;
  records: number;
  uploadSeconds: number;
}

export interface Measurer {
  /** Bytes now, with a breakdown. */
  measure(): Promise<{ total: number; parts: Record<string, number> }>;
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
      const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all() as Array<{ name: string; bytes: number }>;
      return { total: statSync(file).size, parts: Object.fromEntries(rows.map((row) => [row.name, row.bytes])) };
    },
    async close() {
      db.close();
    },
  };
}

/** Per data table, pg_total_relation_size. */
export async function postgresParts(reader: import('pg').Client): Promise<Record<string, number>> {
  const parts: Record<string, number> = {};
  for (const table of DATA_TABLES) {
    const { rows } = await reader.query<{ bytes: string }>('SELECT pg_total_relation_size($1::regclass) AS bytes', [table]);
    parts[table] = Number(rows[0]!.bytes);
  }
  return parts;
}

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
    const app = await cli<{ client_id: string; client_secret: string }>(databaseUrl, [
      'apps', 'create', '--owner', people[0]!.credentials.username, '--name', 'Device Sync', '--redirect-uri', REDIRECT_URI, '--scopes', WRITE_SCOPES.replaceAll(' ', ','),
    ]);
    server = await startStride(databaseUrl, `Stride ${dialect} (size)`);
    const client = { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI };
    const tokens: string[] = [];
    for (const { credentials } of people) {
      const [token] = await obtainTokens(server.origin, STRIDE_ENDPOINTS(server.origin), client, credentials, { scope: WRITE_SCOPES }, 1);
      tokens.push(token!.access_token);
    }
    measurer = temporary
      ? {
          async measure() {
            const parts = await postgresParts(temporary.reader);
            return { total: Object.values(parts).reduce((a, b) => a + b, 0), parts };
          },
          async close() {},
        }
      : sqliteMeasurer(`${workDir}/size.sqlite`);
    const before = await measurer.measure();
    // Whole days ending at the last UTC midnight, the same for every run of a day.
    const now = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 1;
    log(`load 7: uploading ${PERSONS} people × ${DAYS} days of every kind of data through the API (${dialect})…`);
    let requests = 0;
    let records = 0;
    const started = performance.now();
    for (const [i, person] of people.entries()) {
      const uploaded = await uploadPerson(server.origin, tokens[i]!, synthesizePerson(person.life, now, DAYS, person.seed));
      requests += uploaded.requests;
      records += uploaded.records;
    }
    const uploadSeconds = (performance.now() - started) / 1000;
    const after = await measurer.measure();
    const personDays = PERSONS * DAYS;
    const parts: Record<string, number> = {};
    for (const name of new Set([...Object.keys(before.parts), ...Object.keys(after.parts)])) {
      const grown = (after.parts[name] ?? 0) - (before.parts[name] ?? 0);
      if (grown !== 0) parts[name] = grown / personDays;
    }
    return { dialect, bytesPerPersonDay: (after.total - before.total) / personDays, parts, personDays, requests, records, uploadSeconds };
  } finally {
    await measurer?.close();
    if (server) await stopServer(server);
    await temporary?.drop();
  }
}
