/**
 * A PostgreSQL cluster of the test's own — for tests that stop, restart or kill their database,
 * which must never happen to the shared one. initdb in a temporary folder, a free port, a Unix
 * socket in the same folder; run as the `postgres` OS user (through runuser when the tests run as
 * root). fsync is off (nothing here outlives the test, and a stopped server is not an OS crash); commits
 * stay synchronous, so a crash-like stop loses nothing a client was told.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './cli.js';
import { missing } from './dependencies.js';

const run = promisify(execFile);

/**
 * The PostgreSQL server binaries: TEST_POSTGRES_BIN, else `pg_config --bindir` when it holds
 * initdb, else the newest /usr/lib/postgresql/<version>/bin that does (Debian keeps each major
 * version there). Undefined when none is installed.
 */
function findServerBinaries(): string | undefined {
  if (process.env.TEST_POSTGRES_BIN) return process.env.TEST_POSTGRES_BIN;
  const configured = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = configured.status === 0 ? [configured.stdout.trim()] : [];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((name) => /^\d+(\.\d+)?$/.test(name)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(root, version, 'bin')));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')));
}

const BIN = findServerBinaries();

export interface PostgresCluster {
  /** postgres://… of the cluster's `stride` database. */
  url: string;
  port: number;
  /** The server's log file. */
  log: string;
  start(): Promise<void>;
  /** `immediate`: killed without a shutdown checkpoint (as a crash); `fast`: clean, sessions ended. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** pg_terminate_backend on every other session of the `stride` database; how many were ended. */
  terminateBackends(): Promise<number>;
  /** Stops the cluster (if running) and deletes its folder. */
  destroy(): Promise<void>;
}

/** Why no cluster of its own can be made here, or null when one can; in CI, thrown. */
export function postgresClusterUnavailable(): string | null {
  if (BIN === undefined) return missing('no PostgreSQL server binaries (initdb) in pg_config --bindir or /usr/lib/postgresql/*/bin: apt-get install postgresql, or set TEST_POSTGRES_BIN');
  if (!existsSync(join(BIN, 'initdb'))) return missing(`no initdb in TEST_POSTGRES_BIN (${BIN})`);
  if (userInfo().uid !== 0 && userInfo().username !== 'postgres') return missing('making a PostgreSQL cluster needs root (runuser) or the postgres user');
  return null;
}

function asPostgres(command: string, args: string[]) {
  const binary = join(BIN!, command);
  return userInfo().uid === 0 ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);
}

/** A new folder the postgres OS user owns (when the tests run as root), for its servers' files. */
export async function folderForPostgres(prefix = 'stride-pg-'): Promise<string> {
  const dir = mkdtempSync(`/tmp/${prefix}`);
  if (userInfo().uid === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  return dir;
}

export async function createPostgresCluster(): Promise<PostgresCluster> {
  const unavailable = postgresClusterUnavailable();
  if (unavailable) throw new Error(unavailable);
  const dir = await folderForPostgres();
  const data = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions']);
  const cluster = clusterIn(dir, port);
  try {
    await cluster.start();
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query('create database stride');
    await admin.end();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}

/**
 * A streaming replica of `primary`, started: `pg_basebackup -R -X stream` (a fast checkpoint rather
 * than waiting for a timed one; initdb's pg_hba.conf
 * already lets local connections replicate with trust), then the copy started as a hot standby.
 */
export async function createStreamingReplica(primary: PostgresCluster): Promise<PostgresCluster> {
  const dir = await folderForPostgres();
  const port = await freePort();
  await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', join(dir, 'data'), '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']);
  const replica = clusterIn(dir, port);
  try {
    await replica.start();
  } catch (error) {
    await replica.destroy();
    throw error;
  }
  return replica;
}

function clusterIn(dir: string, port: number): PostgresCluster {
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  let running = false;

  const cluster: PostgresCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/stride`,
    port,
    log,
    async start() {
      await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', log, '-w', '-t', '30', 'start']);
      running = true;
    },
    async stop(mode = 'immediate') {
      await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    async terminateBackends() {
      const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
      await admin.connect();
      try {
        const result = await admin.query<{ ended: boolean }>(
          `select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = 'stride' and pid <> pg_backend_pid()`,
        );
        return result.rows.filter((row) => row.ended).length;
      } finally {
        await admin.end();
      }
    },
    async destroy() {
      if (running) await cluster.stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}
