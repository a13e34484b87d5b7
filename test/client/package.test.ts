/**
 * @stride/client as an app installs it: `npm pack` of the workspace, `npm install` of the tarball
 * into an empty project, then that project's own code — imported by Node.js, and type-checked by
 * tsc against the declarations that shipped (the generated API types among them).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('../../../packages/client/', import.meta.url));
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

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

it('ships the types: the code of an app is checked against the API', async () => {
  const code = `import { createStride, type Tokens } from '@stride/client';
declare const tokens: Tokens;
const person = createStride({ baseUrl: 'https://stride.example', clientId: 'sc_1' }).person(tokens);
export const name: Promise<string> = person.get('/v1/users/me').then((me) => me.display_name);
`;
  writeFileSync(join(project, 'good.ts'), code);
  writeFileSync(join(project, 'bad.ts'), code.replace('me.display_name', 'me.displayName'));
  // One run for both files; the good one must bring no error, the bad one its own.
  const options = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(PACKAGE_DIR, '../../node_modules/@types')];
  const errors = await run(process.execPath, [TSC, ...options, 'good.ts', 'bad.ts'], { cwd: project }).then(
    () => '',
    (error: { stdout: string }) => error.stdout,
  );
  const bad = errors.split('\n').filter((line) => line.trim() !== '');
  assert.equal(bad.filter((line) => line.startsWith('good.ts')).length, 0, errors);
  assert.equal(bad.length, 1, errors);
  assert.match(bad[0]!, /^bad\.ts.*Property 'displayName' does not exist/);
});
