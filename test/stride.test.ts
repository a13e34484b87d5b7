/**
 * The `stride` command runs Node with the flags of its `#!` line (src/stride.cts); `npm start` and
 * `npm run stride` pass the same ones, and the bench starts Stride with them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { strideNodeFlags } from '../bench/lib/servers.js';
import { CLI_PATH } from './support/cli.js';

const run = promisify(execFile);

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

/** The node flags of `… && node FLAGS dist/src/stride.cjs …` in an npm script. */
function scriptFlags(name: string): string[] {
  const match = /(?:^|&& )node((?: +--\S+)*) +dist\/src\/stride\.cjs\b/.exec(PACKAGE.scripts[name] ?? '');
  assert.ok(match, `npm run ${name} runs node dist/src/stride.cjs: ${PACKAGE.scripts[name]}`);
  return match[1]!.split(' ').filter((flag) => flag !== '');
}

describe('the node flags of the stride command', () => {
  it('are on its #! line, and npm start and npm run stride pass the same', () => {
    const flags = strideNodeFlags(CLI_PATH);
    assert.ok(flags.includes('--max-semi-space-size=4'), `flags of the #! line: ${flags.join(' ')}`);
    assert.deepEqual(scriptFlags('start'), flags);
    assert.deepEqual(scriptFlags('stride'), flags);
  });

  it('are flags this Node accepts', async () => {
    const { stdout } = await run(process.execPath, [...strideNodeFlags(CLI_PATH), CLI_PATH, '--help']);
    assert.match(stdout, /^Usage: stride/);
  });

  it('are refused when the #! line is not "env node" with flags', () => {
    assert.throws(() => strideNodeFlags(new URL('../../package.json', import.meta.url).pathname), /does not start with/);
  });
});
