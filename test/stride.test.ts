/**
 * The `stride` command as installed (src/stride.cts), in a child process as an operator runs it:
 * with the Node flags of its `#!` line, JSON on stdout with --json, and a failure's one line on
 * stderr with exit code 1. What each command does is tested in process (test/cli/).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { strideNodeFlags } from '../bench/lib/servers.js';
import { CLI_PATH, runCli } from './support/cli.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'stride-command-'));
const DATABASE_URL = `sqlite:${join(dir, 'stride.sqlite')}`;

describe('the stride command', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs with the flags of its #! line and an operator’s UV_THREADPOOL_SIZE, printing JSON with --json', async () => {
    const { stdout } = await run(
      process.execPath,
      [...strideNodeFlags(CLI_PATH), CLI_PATH, 'users', 'create', '--email', 'Op@Example.com', '--password', 'correct horse', '--json'],
      { env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL, UV_THREADPOOL_SIZE: '1' } },
    );
    const user = JSON.parse(stdout);
    assert.equal(user.email, 'op@example.com');
    assert.match(user.id, /\S/);
  });

  it('fails with one line on stderr, nothing on stdout and exit code 1', async () => {
    const failed = await runCli(['users', 'create', '--email', 'op@example.com', '--password', 'another pass'], { DATABASE_URL });
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.equal(failed.stderr, 'stride: an account with email op@example.com already exists\n');
  });

  it('names a bad environment variable in one line', async () => {
    const failed = await runCli(['migrate'], { DATABASE_URL, ACCESS_TOKEN_TTL: 'forever' });
    assert.equal(failed.code, 1);
    assert.equal(failed.stderr, 'stride: ACCESS_TOKEN_TTL must be a whole number, got "forever"\n');
  });
});
