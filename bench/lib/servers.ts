/**
 * Starting the three servers of a run and preparing what the loads need: accounts, an app,
 * 30 days of minute steps, and tokens obtained through each server's own login and consent pages.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ALL_SCOPES as SCOPE_NAMES } from '../../src/domain/scopes.js';
import { sendOnce } from './browser.js';
import type { ProofKey } from './dpop-proofs.js';
import { obtainTokens, type ClientCredentials, type Credentials, type ServerEndpoints, type TokenSet } from './oauth-client.js';
import { freePort, startServer, type ServerProcess } from './processes.js';

const run = promisify(execFile);

/**
 * The `stride` command as installed (it sizes the thread pool, then runs the CLI) and the reference
 * servers' scripts, relative to this file (under dist/).
 */
export const STRIDE_CLI = fileURLToPath(new URL('../../src/stride.cjs', import.meta.url));

/**
 * The node flags the `stride` command runs with, from its `#!/usr/bin/env -S node …` line (npm
 * start passes the same): the bench starts Stride with them, as shipped.
 */
export function strideNodeFlags(cli = STRIDE_CLI): string[] {
  const firstLine = readFileSync(cli, 'utf8').split('\n', 1)[0]!;
  const match = /^#!\/usr\/bin\/env (?:-S )?node((?: +--\S+)*) *$/.exec(firstLine);
  if (!match) throw new Error(`${cli} does not start with "#!/usr/bin/env -S node …", but: ${firstLine}`);
  return match[1]!.split(' ').filter((flag) => flag !== '');
}

const BARE_SERVER = fileURLToPath(new URL('../bare-server.js', import.meta.url));
const PEER = fileURLToPath(new URL('../oidc-provider-peer.js', import.meta.url));

/** Stride's own settings are removed from the inherited environment: "everything as shipped". */
const STRIDE_VARIABLES = [
  'PORT', 'HOST', 'PUBLIC_URL', 'AUTH_URL', 'DATABASE_URL', 'REDIS_URL', 'ACCESS_TOKEN_TTL', 'REFRESH_TOKEN_TTL',
  'AUTH_CODE_TTL', 'REFRESH_REPLAY_WINDOW', 'SESSION_TTL', 'LOG_LEVEL', 'RATE_LIMIT', 'RATE_LIMIT_LOGIN',
  'RATE_LIMIT_TOKEN', 'RATE_LIMIT_API', 'NODE_OPTIONS', 'UV_THREADPOOL_SIZE',
];

/**
 * The environment of a reference server: this process's, without the thread-pool size
 * `npm run bench` gives itself for the hashing bound — the references run with libuv's default.
 */
function referenceEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.UV_THREADPOOL_SIZE;
  return env;
}

export function strideEnv(databaseUrl: string, port?: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of STRIDE_VARIABLES) delete env[name];
  return {
    ...env,
    DATABASE_URL: databaseUrl,
    RATE_LIMIT: 'off',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    ...(port !== undefined && { PORT: String(port) }),
  };
}

/** One `stride` command on `databaseUrl`, its --json answer parsed. */
export async function cli<T>(databaseUrl: string, args: string[]): Promise<T> {
  try {
    const { stdout } = await run(process.execPath, [STRIDE_CLI, ...args, '--json'], {
      env: strideEnv(databaseUrl),
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout) as T;
  } catch (error) {
    const failure = error as { stderr?: string; message: string };
    throw new Error(`stride ${args.slice(0, 2).join(' ')} failed: ${(failure.stderr || failure.message).trim()}`);
  }
}

const ok200 = (path: string) => async (origin: string) => (await sendOnce(`${origin}${path}`, 1000)).status === 200;

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
/** Every scope of docs/api.md's table of scopes: the bench app registers them all. */
export const ALL_SCOPES = SCOPE_NAMES.join(' ');

export interface StrideSetup {
  databaseUrl: string;
  client: ClientCredentials;
  /**
   * A public app (no secret, as an app on a phone or a device) allowed the code, refresh and
   * device grants: the DPoP loads and the devices' polls.
   */
  publicClient: ClientCredentials;
  /** The user whose profile and steps the loads read, and who owns the refresh chains. */
  user: Credentials;
  /** A second user for the authorization-code flows, so they do not touch the chains' grant. */
  flowUser: Credentials;
  /** The 30-day window with data, [start, end) in Unix seconds, whole UTC days. */
  steps: { start: number; end: number; samples: number };
}

/** Accounts, an app and 30 days of minute steps, created with the `stride` CLI as an operator would. */
export async function prepareStride(databaseUrl: string, workDir: string): Promise<StrideSetup> {
  const password = `bench-${randomBytes(9).toString('base64url')}`;
  const user = { username: 'bench@example.com', password };
  const flowUser = { username: 'flows@example.com', password };
  await cli(databaseUrl, ['users', 'create', '--email', user.username, '--password', password, '--name', 'Bench User']);
  await cli(databaseUrl, ['users', 'create', '--email', flowUser.username, '--password', password, '--name', 'Flow User']);
  const app = await cli<{ client_id: string; client_secret: string }>(databaseUrl, [
    'apps', 'create', '--owner', user.username, '--name', 'Bench App', '--redirect-uri', REDIRECT_URI, '--scopes', ALL_SCOPES.replaceAll(' ', ','),
  ]);

  const publicApp = await cli<{ client_id: string }>(databaseUrl, [
    'apps', 'create', '--owner', user.username, '--name', 'Bench Device', '--public', '--redirect-uri', REDIRECT_URI,
    '--scopes', ALL_SCOPES.replaceAll(' ', ','), '--grant-types', 'authorization_code,refresh_token,device_code',
  ]);

  const end = Math.floor(Date.now() / 1000 / 86400) * 86400;
  const start = end - 30 * 86400;
  const lines = ['start_time,value'];
  // A plausible day: quiet nights, busier days; deterministic so every run reads the same data.
  for (let t = start, i = 0; t < end; t += 60, i++) {
    const minuteOfDay = (t % 86400) / 60;
    const awake = minuteOfDay >= 420 && minuteOfDay < 1320;
    lines.push(`${t},${awake ? (i * 37) % 120 : (i * 7) % 3}`);
  }
  const file = join(workDir, 'steps.csv');
  await writeFile(file, `${lines.join('\n')}\n`);
  const imported = await cli<{ imported: number }>(databaseUrl, ['steps', 'import', '--user', user.username, file]);
  return {
    databaseUrl,
    client: { clientId: app.client_id, clientSecret: app.client_secret, redirectUri: REDIRECT_URI },
    publicClient: { clientId: publicApp.client_id, clientSecret: '', redirectUri: REDIRECT_URI },
    user,
    flowUser,
    steps: { start, end, samples: imported.imported },
  };
}

export interface ServerOptions {
  /** Extra node flags for the server process, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** Settings for Stride beyond the bench's own (e.g. short token lifetimes for the soak). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Stride on `databaseUrl`, its public URL the origin the bench sends to (DPoP proofs name it in
 * `htu`, RFC 9449 §4.3).
 */
export async function startStride(databaseUrl: string, name: string, options: ServerOptions = {}): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    name,
    args: [...strideNodeFlags(), ...(options.nodeFlags ?? []), STRIDE_CLI, 'serve'],
    env: { ...strideEnv(databaseUrl, port), PUBLIC_URL: `http://127.0.0.1:${port}`, ...options.env },
    port,
    ready: ok200('/healthz'),
  });
}

export const STRIDE_ENDPOINTS = (origin: string): ServerEndpoints => ({
  authorize: `${origin}/oauth2/authorize`,
  token: `${origin}/oauth2/token`,
});

export function strideTokens(server: ServerProcess, setup: StrideSetup, count: number): Promise<TokenSet[]> {
  return obtainTokens(server.origin, STRIDE_ENDPOINTS(server.origin), setup.client, setup.user, { scope: ALL_SCOPES }, count);
}

/** The bare server, answering its small body, or with `bodyFile` that file's bytes. */
export async function startBare(bodyFile?: string): Promise<ServerProcess> {
  const port = await freePort();
  const name = bodyFile ? 'bare node:http (same body)' : 'bare node:http';
  return startServer({ name, args: [BARE_SERVER, String(port), ...(bodyFile ? [bodyFile] : [])], env: referenceEnv(), port, ready: ok200('/') });
}

export interface PeerSetup {
  server: ServerProcess;
  client: ClientCredentials;
  /** The public client of the DPoP loads (no secret). */
  publicClient: ClientCredentials;
  endpoints: ServerEndpoints & { userinfo: string };
}

export async function startPeer(options: ServerOptions = {}): Promise<PeerSetup> {
  const port = await freePort();
  const client = { clientId: 'bench-client', clientSecret: randomBytes(24).toString('base64url'), redirectUri: REDIRECT_URI };
  const env = referenceEnv({ NODE_ENV: 'production' });
  delete env.DEBUG;
  const server = await startServer({
    name: 'oidc-provider',
    args: [...(options.nodeFlags ?? []), PEER, String(port), client.clientId, client.clientSecret, client.redirectUri],
    env,
    port,
    ready: ok200('/.well-known/openid-configuration'),
  });
  const discovery = JSON.parse((await sendOnce(`${server.origin}/.well-known/openid-configuration`)).body) as {
    authorization_endpoint: string;
    token_endpoint: string;
    userinfo_endpoint: string;
  };
  return {
    server,
    client,
    publicClient: { clientId: `${client.clientId}-public`, clientSecret: '', redirectUri: REDIRECT_URI },
    endpoints: { authorize: discovery.authorization_endpoint, token: discovery.token_endpoint, userinfo: discovery.userinfo_endpoint },
  };
}

/**
 * Tokens from the peer through its login and consent pages; any login name is accepted. With
 * `dpopKey`, its public client's, bound to that key.
 */
export function peerTokens(peer: PeerSetup, scope: string, count: number, dpopKey?: ProofKey): Promise<TokenSet[]> {
  const client = dpopKey ? peer.publicClient : peer.client;
  return obtainTokens(peer.server.origin, peer.endpoints, client, { username: 'bench-user', password: 'any' }, { scope, ...(dpopKey && { dpopKey }) }, count);
}
