/**
 * What `npm start` and `npm run stride` do before they start (scripts/build-if-changed.mjs): build
 * only when a source is newer than the last build, and say so first. Run on a copy of the script in
 * a project of its own whose build only makes dist/, so the real build is never touched.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/build-if-changed.mjs', import.meta.url));

/** What the script printed (on stderr; nothing on stdout), after exiting 0 so `&&` goes on. */
function run(root: string): string {
  const answer = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-changed.mjs')], { cwd: root, encoding: 'utf8' });
  assert.equal(answer.status, 0, answer.stderr);
  assert.equal(answer.stdout, '');
  return answer.stderr;
}

describe('npm start', () => {
  const root = mkdtempSync(join(tmpdir(), 'stride-build-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'src'));
  copyFileSync(script, join(root, 'scripts', 'build-if-changed.mjs'));
  // The build counts its runs in dist/builds, so a skipped build shows.
  const build = `node -e "const fs=require('fs');fs.mkdirSync('dist',{recursive:true});fs.appendFileSync('dist/builds','x')"`;
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'p', private: true, scripts: { build } }));
  writeFileSync(join(root, 'src', 'app.ts'), 'export {};\n');
  const builds = () => (existsSync(join(root, 'dist', 'builds')) ? readFileSync(join(root, 'dist', 'builds'), 'utf8').length : 0);

  it('says it is building, and how long the first build takes, when nothing was built yet', () => {
    assert.equal(run(root), 'Building Stride (the first run takes about 20 s)…\n');
    assert.equal(builds(), 1);
  });

  it('neither builds nor speaks when nothing changed, and builds again once a source changes', () => {
    assert.equal(run(root), '');
    assert.equal(builds(), 1);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'src', 'app.ts'), later, later);
    assert.equal(run(root), 'Building Stride (the sources changed since the last build)…\n');
    assert.equal(builds(), 2);
  });

  it('is what package.json runs before npm start and npm run stride', () => {
    const { scripts } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['start', 'stride']) assert.match(scripts[name]!, /^node scripts\/build-if-changed\.mjs && node dist\/src\/stride\.cjs/);
  });
});
