/**
 * Runs the `stride` command line: in this process (`runCliInProcess`, for the commands' behaviour),
 * or the compiled command in a child process, as an operator would (`runCli`, `startServer`).
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/**
 * dist/test/support/cli.js → dist/src/stride.cjs, the `stride` command as installed (works from any
 * build folder of the same shape).
 */
export const CLI_PATH = fileURLToPath(new URL('../../src/stride.cjs', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `args` through `cli` and asserts what a refused command does: exit 1, nothing on stdout, one line on stderr matching `pattern`. */
export async function expectCliFailure(cli: (...args: string[]) => Promise<CliResult>, args: string[], pattern: RegExp): Promise<void> {
  const run = await cli(...args);
  assert.equal(run.code, 1, `expected ${args.join(' ')} to fail`);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.trim().split('\n').length, 1, `one line, got: ${run.stderr}`);
  assert.match(run.stderr, pattern);
}

/**
 * `stride ARGS` with only `env` for its environment (and LOG_LEVEL=silent unless given), its
 * output collected; the same result as `runCli` without starting a process.
 */
export async function runCliInProcess(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<CliResult> {
  // Loaded here, not above: most users of this file only start servers or look for a free port.
  const { runStride } = await import('../../src/cli.js');
  let stdout = '';
  let stderr = '';
  const code = await runStride(args, {
    env: { LOG_LEVEL: 'silent', ...env },
    stdin: Readable.from([stdin]),
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** `stride ARGS` in a child process, with this process's environment and `env`. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, ...args],
      { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Starts `stride serve`; resolves once it answers /healthz on `port`. */
export async function startServer(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI_PATH, 'serve'], {
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) return child;
    } catch {
      // not listening yet
    }
    // A refused connection costs next to nothing; a longer pause would only add to every start.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}

/** A free loopback port (bind to 0, read it, release it). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
