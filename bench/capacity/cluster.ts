/**
 * The capacity run's own PostgreSQL: a primary in a temporary folder on a free port (never a
 * shared server), a streaming replica of it (pg_basebackup -R), and PgBouncer in transaction mode
 * in front of the primary. The servers run as the `postgres` OS user (through runuser when the
 * run is root's); everything started here is stopped by `stop()`, also after a failed start.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';
import { freePort } from '../lib/processes.js';

const run = promisify(execFile);
const PGBOUNCER = process.env.CAPACITY_PGBOUNCER ?? '/usr/sbin/pgbouncer';

function serverBinaries(): string {
  const configured = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = configured.status === 0 ? [configured.stdout.trim()] : [];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(root, version, 'bin')));
  }
  const found = candidates.find((dir) => existsSync(join(dir, 'initdb')));
  if (!found) throw new Error('no PostgreSQL server binaries (initdb): apt-get install postgresql');
  return found;
}

const asRoot = userInfo().uid === 0;
function asPostgres(binary: string, args: string[]) {
  return asRoot ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);
}

async function folderForPostgres(prefix: string): Promise<string> {
  const dir = mkdtempSync(`/tmp/${prefix}`);
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

export interface Server {
  port: number;
  /** The processes to count CPU of: the postmaster (whose children's time it reaps) or pgbouncer. */
  pid(): number | null;
}

export interface CapacityCluster {
  /** postgres://… of the `stride` database on the primary, direct. */
  primaryUrl: string;
  replicaUrl: string;
  /** The same database through PgBouncer (transaction pooling). */
  bouncerUrl: string;
  primary: Server;
  replica: Server;
  bouncer: Server;
  stop(): Promise<void>;
}

function postmasterPid(data: string): number | null {
  try {
    return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
  } catch {
    return null;
  }
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

export interface ClusterOptions {
  /** PgBouncer's server connections to the primary. */
  poolSize?: number;
}

export async function startCapacityCluster(options: ClusterOptions = {}): Promise<CapacityCluster> {
  const bin = serverBinaries();
  const folders: string[] = [];
  const started: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const end of started.reverse()) await end().catch(() => undefined);
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  };
  const startPostgres = async (dir: string, port: number) => {
    const data = join(dir, 'data');
    // The shared machine's defaults otherwise; durability as shipped (fsync on), so WAL and CPU are a real server's.
    // pg_stat_statements: what the primary's CPU is spent on, statement by statement, for the report.
    const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_buffers=256MB -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on`;
    await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
    started.push(async () => {
      await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']);
    });
    return { port, pid: () => postmasterPid(data) };
  };
  try {
    const primaryDir = await folderForPostgres('stride-capacity-primary-');
    folders.push(primaryDir);
    await asPostgres(join(bin, 'initdb'), ['-D', join(primaryDir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions']);
    const primary = await startPostgres(primaryDir, await freePort());
    await run('psql', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-d', 'postgres', '-qc', 'create database stride']);
    await run('psql', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-d', 'stride', '-qc', 'create extension pg_stat_statements']);

    const replicaDir = await folderForPostgres('stride-capacity-replica-');
    folders.push(replicaDir);
    await asPostgres(join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', join(replicaDir, 'data'), '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']);
    const replica = await startPostgres(replicaDir, await freePort());

    const bouncerDir = await folderForPostgres('stride-capacity-pgbouncer-');
    folders.push(bouncerDir);
    const bouncerPort = await freePort();
    const pidFile = join(bouncerDir, 'pgbouncer.pid');
    writeFileSync(join(bouncerDir, 'userlist.txt'), '"postgres" ""\n');
    writeFileSync(join(bouncerDir, 'pgbouncer.ini'), [
      '[databases]',
      `stride = host=127.0.0.1 port=${primary.port} dbname=stride`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${bouncerPort}`,
      `unix_socket_dir = ${bouncerDir}`,
      'auth_type = trust',
      `auth_file = ${join(bouncerDir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'max_client_conn = 1000',
      `logfile = ${join(bouncerDir, 'pgbouncer.log')}`,
      `pidfile = ${pidFile}`,
      '',
    ].join('\n'));
    const ini = join(bouncerDir, 'pgbouncer.ini');
    const child: ChildProcess = asRoot
      ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, ini], { stdio: 'ignore' })
      : spawn(PGBOUNCER, [ini], { stdio: 'ignore' });
    const bouncerPid = () => {
      try {
        return Number(readFileSync(pidFile, 'utf8').trim());
      } catch {
        return null;
      }
    };
    started.push(async () => {
      // runuser need not pass a signal on: the pid file names pgbouncer itself.
      const pid = bouncerPid();
      if (pid) process.kill(pid, 'SIGTERM');
      else child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
    });
    const deadline = Date.now() + 10_000;
    while (!(await listening(bouncerPort))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`pgbouncer did not start on port ${bouncerPort}`);
      await sleep(50);
    }
    return {
      primaryUrl: `postgres://postgres@127.0.0.1:${primary.port}/stride`,
      replicaUrl: `postgres://postgres@127.0.0.1:${replica.port}/stride`,
      bouncerUrl: `postgres://postgres@127.0.0.1:${bouncerPort}/stride`,
      primary,
      replica,
      bouncer: { port: bouncerPort, pid: bouncerPid },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
