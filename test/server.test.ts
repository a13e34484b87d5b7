import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { freePort, runCli, startServer } from './support/cli.js';
import { createTestDatabase, forEachDialect } from './support/databases.js';

forEachDialect('stride serve', (dialect) => {
  it('creates its schema on first start, serves /readyz and stops on SIGTERM', async () => {
    const database = await createTestDatabase(dialect, { migrate: false });
    let url = database.url;
    if (dialect === 'sqlite') url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'stride-serve-')), 'nested', 'stride.sqlite')}`;
    const port = await freePort();
    const server = await startServer(port, { DATABASE_URL: url });
    try {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready' });
      const missing = await fetch(`http://127.0.0.1:${port}/nothing-here`);
      assert.equal(missing.status, 404);
    } finally {
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      server.kill('SIGTERM');
      assert.equal(await exited, 0);
      await database.drop();
    }
  });
});

it('refuses to start with a bad setting, naming it in one line', async () => {
  const run = await runCli(['serve'], { PORT: 'abc' });
  assert.equal(run.code, 1);
  assert.equal(run.stderr, 'stride: PORT must be a whole number, got "abc"\n');
});
