/**
 * A PgBouncer of the test's own in transaction pooling mode (Debian's pgbouncer, run as the
 * `postgres` OS user through runuser when the tests run as root), in front of a fresh database of
 * the shared PostgreSQL: the database is dropped afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { freePort } from './cli.js';
import { missing } from './dependencies.js';
import { folderForPostgres } from './postgres-cluster.js';
import { POSTGRES_URL } from './databases.js';

const BINARY = process.env.TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** postgres://… through PgBouncer. */
  url: string;
  /** postgres://… of the same database, straight to PostgreSQL. */
  directUrl: string;
  stop(): Promise<void>;
}

/** Why no PgBouncer can be started here, or null when one can; in CI, thrown. */
export function pgbouncerUnavailable(): string | null {
  if (!POSTGRES_URL) return missing('TEST_DATABASE_URL is not set: PgBouncer needs a PostgreSQL server to stand in front of');
  if (!existsSync(BINARY)) return missing(`no pgbouncer at ${BINARY} (apt-get install pgbouncer, or set TEST_PGBOUNCER)`);
  if (userInfo().uid !== 0 && userInfo().username !== 'postgres') return missing('starting pgbouncer needs root (it refuses to run as root, so it is run as postgres through runuser) or the postgres user');
  return null;
}

export async function startPgBouncer(): Promise<PgBouncer> {
  const database = `stride_pgb_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  const server = new URL(POSTGRES_URL!);
  const directUrl = new URL(POSTGRES_URL!);
  directUrl.pathname = `/${database}`;

  const dir = await folderForPostgres('stride-pgbouncer-');
  const port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), `"${server.username || 'postgres'}" ""\n`);
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir = ${dir}`,
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    'default_pool_size = 4',
    'max_client_conn = 200',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    '',
  ].join('\n'));
  let child: ChildProcess;
  if (userInfo().uid === 0) {
    child = spawn('runuser', ['-u', 'postgres', '--', BINARY, join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  } else {
    child = spawn(BINARY, [join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  }
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`pgbouncer did not start on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `postgres://${server.username || 'postgres'}@127.0.0.1:${port}/${database}`,
    directUrl: directUrl.toString(),
    async stop() {
      // runuser need not pass the signal on: the pid file names pgbouncer itself.
      const pidFile = join(dir, 'pgbouncer.pid');
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM');
      else child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
      const cleanup = new pg.Client({ connectionString: POSTGRES_URL });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${database} with (force)`);
      await cleanup.end();
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
