/**
 * docs/oauth.md, "Fitbit clients": Debian's python-fitbit, unmodified, connects to Stride listening
 * on 127.0.0.1 with only its endpoints' addresses changed. It asks with its default Fitbit scope
 * words, the test plays the person at the URL it prints (sign-in, consent) and hands the redirect
 * back; python-fitbit exchanges the code and refreshes through requests-oauthlib, whose oauthlib
 * raises "Scope has changed" unless each answer names the words it asked with.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import type { App } from '../../src/store/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { missing } from '../support/dependencies.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { authorizeAndAllow, Browser, createFixture, signIn, type Fixture } from './flow.js';
import { listeningStride } from './listening.js';

cheapPasswordHashing();

const PYTHON = '/usr/bin/python3';

/** Why python-fitbit cannot run here (Debian's python3-fitbit), or null. */
function pythonFitbitUnavailable(): string | null {
  if (existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import fitbit']).status === 0) return null;
  return missing(`${PYTHON} with python-fitbit not found: install it with "apt-get install -y python3-fitbit"; skipping the python-fitbit test`);
}

/**
 * A python-fitbit program as its README has one: the authorization URL with the library's default
 * scope, the code exchange, then a refresh saved through refresh_cb. Only the class's endpoint
 * addresses are Stride's.
 */
const PROGRAM = `
import json, os, sys
from urllib.parse import parse_qs, urlparse
from fitbit.api import FitbitOauth2Client

stride = os.environ['STRIDE_URL']
FitbitOauth2Client.authorization_url = stride + '/oauth2/authorize'
FitbitOauth2Client.request_token_url = stride + '/oauth2/token'
FitbitOauth2Client.access_token_url = stride + '/oauth2/token'
FitbitOauth2Client.refresh_token_url = stride + '/oauth2/token'

saved = []
client = FitbitOauth2Client(os.environ['CLIENT_ID'], os.environ['CLIENT_SECRET'], redirect_uri=os.environ['REDIRECT_URI'], refresh_cb=saved.append)
url, state = client.authorize_token_url()
print('Open ' + url, flush=True)
back = parse_qs(urlparse(sys.stdin.readline().strip()).query)
assert back['state'] == [state], back
token = client.fetch_access_token(back['code'][0])
refreshed = client.refresh_token()
print(json.dumps({'token': token, 'refreshed': refreshed, 'saved': saved}), flush=True)
`;

/** python-fitbit's default scope, each word once, in its order. */
const DEFAULT_WORDS = ['activity', 'nutrition', 'heartrate', 'location', 'profile', 'settings', 'sleep', 'social', 'weight'];

forEachDialect('python-fitbit, unmodified, through the OAuth flow', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let issuer: URL;
  let app: App;
  let secret: string;
  const redirectUri = 'http://127.0.0.1:9/callback';

  before(async () => {
    ({ t, issuer } = await listeningStride(dialect));
    f = await createFixture(t);
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, {
      name: 'Fitbit Python App',
      redirectUris: [redirectUri],
      scopes: ['read_profile', 'read_activity', 'read_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body'],
      isPublic: false,
    });
    app = registered.app;
    secret = registered.clientSecret!;
  });
  after(() => t.close());

  it('exchanges the code and refreshes, answered in its own scope words with user_id', { skip: pythonFitbitUnavailable() ?? false }, async () => {
    // Nothing of the environment but PATH: not OAUTHLIB_RELAX_TOKEN_SCOPE above all. oauthlib
    // refuses http:// unless told; this Stride is on loopback.
    const child = spawn(PYTHON, ['-c', PROGRAM], {
      env: { PATH: process.env.PATH ?? '', OAUTHLIB_INSECURE_TRANSPORT: '1', STRIDE_URL: issuer.origin, CLIENT_ID: app.clientId, CLIENT_SECRET: secret, REDIRECT_URI: redirectUri },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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
      void exited.then(() => reject(new Error(`python-fitbit ended before printing the URL: ${stdout}${stderr}`)));
    });
    const authorizationUrl = new URL(await printed);
    assert.equal(authorizationUrl.searchParams.get('scope'), 'activity nutrition heartrate location nutrition profile settings sleep social weight');

    const browser = new Browser(null, issuer.origin);
    const toLogin = await browser.get(authorizationUrl.pathname + authorizationUrl.search);
    assert.equal(toLogin.status, 302);
    const signedIn = await signIn(browser, f.user.email, f.password, toLogin.location().searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    const back = await authorizeAndAllow(browser, signedIn.location().pathname + signedIn.location().search);
    child.stdin.end(`${back}\n`);
    assert.equal(await exited, 0, stderr);

    const { token, refreshed, saved } = JSON.parse(stdout.trim().split('\n').at(-1)!);
    assert.deepEqual(token.scope, DEFAULT_WORDS);
    assert.equal(token.user_id, f.user.id);
    assert.deepEqual(refreshed.scope, DEFAULT_WORDS);
    assert.equal(refreshed.user_id, f.user.id);
    assert.notEqual(refreshed.refresh_token, token.refresh_token);
    assert.deepEqual(saved, [refreshed], 'refresh_cb was given the refreshed token');

    const me = await t.app.inject({ url: '/v1/users/me', headers: { authorization: `Bearer ${refreshed.access_token}` } });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().id, token.user_id);
  });
});
