/**
 * @stride/client as an app installs it: `npm pack` of the workspace, `npm install` of the tarball
 * into an empty project, then that project's own code run by Node.js, and the declarations that
 * shipped (the generated API types among them).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('../../../packages/client/', import.meta.url));

let project: string;

before(async () => {
  project = mkdtempSync(join(tmpdir(), 'stride-client-install-'));
  await run('npm', ['pack', '--silent', '--pack-destination', project], { cwd: PACKAGE_DIR });
  const tarball = readdirSync(project).find((name) => name.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }));
  // The dependencies are those the repository's own install already fetched.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', `./${tarball}`], { cwd: project });
});

after(() => rmSync(project, { recursive: true, force: true }));

it('is imported from the installed tarball and works', async () => {
  writeFileSync(
    join(project, 'app.mjs'),
    `import { createStride, verifyWebhook, StrideError } from '@stride/client';
const stride = createStride({ baseUrl: 'https://stride.example', clientId: 'sc_1' });
const request = await stride.authorizationUrl({ redirectUri: 'https://app.example/cb', scope: ['read_profile'] });
let refused = '';
try { verifyWebhook('whsec_' + btoa('0123456789abcdef0123456789abcdef'), '{}', {}); } catch (error) { refused = error instanceof StrideError ? error.error : String(error); }
console.log(JSON.stringify({ url: request.url, refused }));
`,
  );
  const { stdout } = await run(process.execPath, ['app.mjs'], { cwd: project });
  const { url, refused } = JSON.parse(stdout);
  const authorize = new URL(url);
  assert.equal(authorize.origin + authorize.pathname, 'https://stride.example/oauth2/authorize');
  assert.equal(authorize.searchParams.get('code_challenge')?.length, 43);
  assert.equal(refused, 'invalid_signature');
});

it('ships the declarations, the generated API types among them, where the package points', () => {
  // Whether code type-checks against them is what test/client/stride-client.test.ts's typeChecks
  // prove when the suite compiles (the same files, through the workspace).
  const installed = join(project, 'node_modules', '@stride', 'client');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const entry = readFileSync(join(installed, manifest.exports['.'].types), 'utf8');
  assert.match(entry, /export \{ createStride/);
  const api = readFileSync(join(installed, 'dist', 'generated', 'api.d.ts'), 'utf8');
  assert.match(api, /"\/v1\/users\/me": \{/);
  assert.match(api, /display_name: string;/);
  // Only the build: no sources, no build info.
  const shipped = readdirSync(join(installed, 'dist'), { recursive: true }).map(String);
  assert.deepEqual(shipped.filter((file) => !/\.(js|d\.ts)$/.test(file) && file !== 'generated'), []);
});
