/** A temporary database on the PostgreSQL server of a postgres:// URL, for one Stride of a run. */
import pg from 'pg';

export interface TemporaryDatabase {
  /** The URL of the new database. */
  url: string;
  /** A connection of the bench's own to it (counting rows, measuring tables). */
  reader: pg.Client;
  /** Ends the reader and drops the database (ending its other sessions). */
  drop(): Promise<void>;
}

export async function temporaryPostgresDatabase(serverUrl: string, label: string): Promise<TemporaryDatabase> {
  const admin = new pg.Client({ connectionString: serverUrl });
  // DROP … WITH (FORCE) ends the other sessions on an interrupted run; that is expected.
  admin.on('error', () => undefined);
  await admin.connect();
  const database = `stride_bench_${label}_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const reader = new pg.Client({ connectionString: url.toString() });
  reader.on('error', () => undefined);
  await reader.connect();
  return {
    url: url.toString(),
    reader,
    async drop() {
      await reader.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
      await admin.end().catch(() => undefined);
    },
  };
}
