/**
 * docs/oauth.md, "Connecting with client libraries": the Node.js (oauth4webapi) and Python
 * (Authlib) programs — and the Node.js one with the DPoP section's lines in place of its end, for
 * a public app — are taken from the page as written and run against a real server, with the
 * environment the page tells a developer to set. The test plays the person: it signs in and allows
 * the app at the URL the program prints, and the browser's redirect reaches the program's loopback
 * redirect URI.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import { authorizeAndAllow, Browser, createOAuthTestApp, signIn } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { freePort } from '../support/cli.js';
import { missing } from '../support/dependencies.js';
import { blockAfter, codeBlocks } from '../support/markdown.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

const PYTHON = '/usr/bin/python3';
const PASSWORD = 'correct horse battery';

/** The first code block of `language` after the heading `heading` of docs/oauth.md, as a reader copies it. */
const codeBlock = (heading: string, language: string) => blockAfter(readFileSync('docs/oauth.md', 'utf8'), heading, language).code;

/** Why the Python program cannot run here (Debian's python3-authlib and python3-requests), or null. */
function pythonUnavailable(): string | null {
  if (existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import authlib, requests']).status === 0) return null;
  return missing(`${PYTHON} with Authlib and requests not found: install them with "apt-get install -y python3-authlib python3-requests"; skipping the Python client test`);
}

describe('the client library programs of docs/oauth.md', () => {
  let t: TestApp;
  let baseUrl: string;
  let clientId: string;
  let clientSecret: string;
  let publicClientId: string;
  let email: string;
  let redirectUri: string;

  before(async () => {
    const port = await freePort();
    // http://localhost is the address of a server on one's own machine (and Authlib's one exception to https).
    baseUrl = `http://localhost:${port}`;
    t = await createOAuthTestApp('sqlite', { PUBLIC_URL: baseUrl });
    await t.app.listen({ host: 'localhost', port });
    // The page's http://127.0.0.1:8400/callback, on a port free here.
    redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    const developer = await createAccount(t.database.stores.users, t.clock, { email: 'library-developer@example.com', password: PASSWORD, displayName: 'Library Developer' });
    email = 'library-walker@example.com';
    await createAccount(t.database.stores.users, t.clock, { email, password: PASSWORD, displayName: 'Library Walker' });
    const registered = await registerApp(t.database.stores.apps, t.clock, developer.id, {
      name: 'Library Client',
      redirectUris: [redirectUri],
      scopes: ['read_profile', 'read_activity'],
      isPublic: false,
    });
    clientId = registered.app.clientId;
    clientSecret = registered.clientSecret!;
    const publicApp = await registerApp(t.database.stores.apps, t.clock, developer.id, {
      name: 'Library Device',
      redirectUris: [redirectUri],
      scopes: ['read_profile', 'read_activity'],
      isPublic: true,
    });
    publicClientId = publicApp.app.clientId;
  });
  after(() => t.close());

  /** Runs `program` with the page's environment, allows the app at the URL it prints, and returns what it printed. */
  async function runAsDeveloper(command: string, args: string[], program: string, client: Record<string, string> = { CLIENT_ID: clientId, CLIENT_SECRET: clientSecret }): Promise<string> {
    const child = spawn(command, args, {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '', STRIDE_URL: baseUrl, ...client, REDIRECT_URI: redirectUri },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(program);
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const printed = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk;
        const url = /^Open (\S+)$/m.exec(stdout)?.[1];
        if (url) resolve(url);
      });
      void exited.then(() => reject(new Error(`the program ended before printing the URL: ${stdout}${stderr}`)));
    });
    const authorizationUrl = new URL(await printed);
    assert.equal(authorizationUrl.origin, baseUrl);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

    const browser = new Browser(null, baseUrl);
    const signedIn = await signIn(browser, email, PASSWORD);
    assert.equal(signedIn.status, 303);
    const back = await authorizeAndAllow(browser, authorizationUrl.pathname + authorizationUrl.search);
    assert.equal(`${back.origin}${back.pathname}`, redirectUri);
    // The browser follows the redirect to the program's loopback server.
    assert.equal((await fetch(back)).status, 200);
    assert.equal(await exited, 0, stderr);
    return stdout;
  }

  it('Node.js, oauth4webapi: code with PKCE, the API, a refresh', async () => {
    const printed = await runAsDeveloper(process.execPath, ['--input-type=module'], codeBlock('### Node.js: oauth4webapi', 'js'));
    assert.match(printed, /^profile: \{.*"display_name":"Library Walker"/m);
    assert.match(printed, /^refreshed, scope: read_profile read_activity$/m);
  });

  it('Node.js, oauth4webapi with DPoP: the DPoP section\'s lines in connect.mjs bind the public app\'s tokens to its key', async () => {
    const connect = codeBlock('### Node.js: oauth4webapi', 'js');
    const dpopLines = codeBlocks(readFileSync('docs/oauth.md', 'utf8'), 'js').find((block) => block.code.includes('oauth.DPoP('))!.code;
    const program = connect.slice(0, connect.indexOf('const params = ')) + dpopLines;
    const printed = await runAsDeveloper(process.execPath, ['--input-type=module'], program, { CLIENT_ID: publicClientId });
    assert.match(printed, /^dpop profile: \{.*"display_name":"Library Walker"/m);
    const app = (await t.database.stores.apps.findByClientId(publicClientId))!;
    const issued = await t.database.db.kysely.selectFrom('access_tokens').select('jkt').where('app_id', '=', app.id).execute();
    assert.equal(issued.length, 1);
    assert.match(issued[0]!.jkt ?? '', /^[\w-]{43}$/, 'bound to the key\'s RFC 7638 thumbprint');
  });

  it('Python, Authlib: code with PKCE, the API, a refresh', { skip: pythonUnavailable() ?? false }, async () => {
    const printed = await runAsDeveloper(PYTHON, ['-'], codeBlock('### Python: Authlib', 'python'));
    assert.match(printed, /^profile: \{.*"display_name":\s*"Library Walker"/m);
    assert.match(printed, /^refreshed, scope: read_profile read_activity$/m);
  });
});
