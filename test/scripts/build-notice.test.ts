/**
 * The line `npm start` prints before it builds (scripts/build-notice.mjs): run on a copy of the
 * script in a project of its own, so the real build is never touched.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/build-notice.mjs', import.meta.url));

/** What the notice printed: on stderr, nothing on stdout, exit code 0 (`&&` goes on to the build). */
function run(root: string): string {
  const answer = spawnSync(process.execPath, [join(root, 'scripts', 'build-notice.mjs')], { encoding: 'utf8' });
  assert.equal(answer.status, 0);
  assert.equal(answer.stdout, '');
  return answer.stderr;
}

describe('npm start', () => {
  const root = mkdtempSync(join(tmpdir(), 'stride-notice-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'src'));
  copyFileSync(script, join(root, 'scripts', 'build-notice.mjs'));
  writeFileSync(join(root, 'src', 'app.ts'), 'export {};\n');

  it('says it is building, and how long the first build takes, when nothing was built yet', () => {
    assert.equal(run(root), 'Building Stride (the first run takes about 20 s)…\n');
  });

  it('says nothing when the build is newer than every source, and speaks again once a source changes', () => {
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', 'tsconfig.tsbuildinfo'), '{}');
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(root, 'src', 'app.ts'), past, past);
    assert.equal(run(root), '');
    utimesSync(join(root, 'src', 'app.ts'), new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    assert.match(run(root), /^Building Stride \(the sources changed since the last build\)…\n$/);
  });

  it('is what package.json runs before the build, for npm start and npm run stride', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['start', 'stride']) assert.match(scripts[name]!, /^node scripts\/build-notice\.mjs && npm run build --silent && /);
  });
});
