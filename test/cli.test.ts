/**
 * The command line itself (src/cli.ts), run in this process: usage, options and commands it does not
 * know, and the environment it reads, each failure one line on stderr with a non-zero exit code.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCliInProcess as cli } from './support/cli.js';

async function expectFailure(args: string[], env: Record<string, string>, pattern: RegExp) {
  const run = await cli(args, env);
  assert.equal(run.code, 1, `expected ${args.join(' ')} to fail`);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.trim().split('\n').length, 1, `one line, got: ${run.stderr}`);
  assert.match(run.stderr, pattern);
}

describe('stride', () => {
  it('prints its usage on stdout: asked with --help, or given no command (then failing)', async () => {
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: stride <command> \[options\]\n/);
    assert.equal(help.stderr, '');
    const none = await cli([]);
    assert.equal(none.code, 1);
    assert.equal(none.stdout, help.stdout);
  });

  it('refuses an option or a command it does not know', async () => {
    await expectFailure(['users', 'create', '--email', 'x@example.com', '--pasword', 'typo'], {}, /^stride: Unknown option '--pasword'.*\(see stride --help\)$/m);
    await expectFailure(['frobnicate'], {}, /^stride: unknown command "frobnicate" \(see stride --help\)$/m);
  });

  it('names a bad environment variable in one line', async () => {
    const run = await cli(['migrate'], { DATABASE_URL: 'sqlite::memory:', ACCESS_TOKEN_TTL: 'forever' });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'stride: ACCESS_TOKEN_TTL must be a whole number, got "forever"\n');
    await expectFailure(['migrate'], { DATABASE_URL: 'mysql://db/stride' }, /^stride: DATABASE_URL must be sqlite:PATH/);
  });
});
