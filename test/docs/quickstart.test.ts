/**
 * docs/quickstart.md, run as a reader follows it, on SQLite and on PostgreSQL: its shell blocks
 * with bash in its folders, its JavaScript blocks saved as the files they name, in the page's
 * order, against a real `stride serve`. The test plays the developer's browser where the page says
 * to open one (sign-in, the consent page's "Who answers?", the test people's Late sync), and checks
 * what the page promises: a week of the test person's steps and heart rate printed by the app, and
 * signed webhooks verified by the receiver — which refuses forged ones.
 *
 * The reader's `npm install` and `npm start` / `npm run -s stride --` build first; here `dist/` is
 * already built, so the bash these blocks run in has an `npm` function that runs the built command
 * line instead, and installs the client's folder offline. Ports come from the page's own variables
 * (PORT, APP_PORT, HOOK_PORT, STRIDE_URL), so that runs in parallel do not collide.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, it } from 'node:test';
import { DateTime } from 'luxon';
import { Webhook } from 'standardwebhooks';
import { Browser, formFields, signIn } from '../oauth/flow.js';
import { CLI_PATH, freePort } from '../support/cli.js';
import { createTestDatabase, onOneDialect, type TestDatabase } from '../support/databases.js';
import { codeBlocks, type CodeBlock } from '../support/markdown.js';

/** dist/test/docs/ → the repository (docs/ is not copied into dist/). */
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE = join(REPO, 'docs', 'quickstart.md');
const DEVELOPER = { email: 'dev@example.com', password: 'correct horse battery staple' };
const WAIT_MS = 30_000;

/** The reader's npm, with dist/ already built: the command line runs, the client installs from its folder offline. */
const NPM_FUNCTION = `
npm() {
  case "$*" in
    install) return 0 ;;
    start) node "$STRIDE_CLI" serve ;;
    "run -s stride -- "*) shift 4; node "$STRIDE_CLI" "$@" ;;
    "install ../"*) command npm "$@" --offline --no-audit --no-fund --loglevel=error ;;
    *) echo "npm $* is not on the page's path" >&2; return 1 ;;
  esac
}
`;

/** A block's bash, running: its output so far, and a way to wait for a line of it. */
class Run {
  output = '';
  readonly exited: Promise<number>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk) => (this.output += chunk));
    child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  }

  async waitFor(pattern: RegExp, what = String(pattern)): Promise<RegExpExecArray> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const match = pattern.exec(this.output);
      if (match) return match;
      if (this.child.exitCode !== null) assert.fail(`exited with ${this.child.exitCode} before ${what}:\n${this.output}`);
      if (Date.now() > deadline) assert.fail(`no ${what} within ${WAIT_MS} ms:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The whole group: bash and what it started. */
  stop(): void {
    if (this.child.exitCode === null) {
      try {
        process.kill(-this.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

// On SQLite alone: migrations run on both databases in test/db/migrate.test.ts.
onOneDialect('docs/quickstart.md, run as written', (dialect) => {
  const blocks = codeBlocks(readFileSync(PAGE, 'utf8'), ['sh', 'js']);
  let next = 0;
  let database: TestDatabase;
  let root: string;
  let clone: string;
  let appFolder: string;
  let env: Record<string, string>;
  let strideUrl: string;
  const runs: Run[] = [];
  let receiver: Run;
  let secret: string;
  let runner: { id: string; label: string };

  /** The page's next block: a JavaScript file saved where it says, or a shell block started in the clone. */
  function take(expected: RegExp): CodeBlock {
    const block = blocks[next++];
    assert.ok(block, `the page has no block matching ${expected} after block ${next - 1}`);
    assert.match(block.code, expected, `block at docs/quickstart.md:${block.line}`);
    return block;
  }

  function saveFile(block: CodeBlock): void {
    const name = /^\/\/ ([\w.-]+\.mjs):/.exec(block.code)?.[1];
    assert.ok(name, `docs/quickstart.md:${block.line} names its file on its first line`);
    writeFileSync(join(appFolder, name), block.code);
  }

  function start(block: CodeBlock): Run {
    const child = spawn('bash', ['-e', '-c', block.code], { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const run = new Run(child);
    runs.push(run);
    return run;
  }

  async function runToEnd(block: CodeBlock): Promise<string> {
    const run = start(block);
    const code = await run.exited;
    assert.equal(code, 0, `docs/quickstart.md:${block.line} failed:\n${run.output}`);
    return run.output;
  }

  before(async () => {
    database = await createTestDatabase(dialect, { migrate: false });
    await database.db.close(); // the server migrates and opens it, as a reader's would
    root = mkdtempSync(join(tmpdir(), 'stride-quickstart-'));
    // The clone: the repository's built parts, linked, in a folder whose parent is the reader's own.
    clone = join(root, 'stride');
    mkdirSync(clone);
    for (const entry of ['package.json', 'packages', 'dist', 'node_modules']) symlinkSync(join(REPO, entry), join(clone, entry));
    appFolder = join(root, 'stride-quickstart');
    writeFileSync(join(root, 'npm.bash'), NPM_FUNCTION);
    const [port, appPort, hookPort] = [await freePort(), await freePort(), await freePort()];
    strideUrl = `http://127.0.0.1:${port}`;
    env = {
      ...(process.env as Record<string, string>),
      BASH_ENV: join(root, 'npm.bash'),
      STRIDE_CLI: CLI_PATH,
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: strideUrl,
      STRIDE_URL: strideUrl,
      APP_PORT: String(appPort),
      HOOK_PORT: String(hookPort),
      // Eight days are enough for a week; the page's 90 cost about a second of CPU per person (performance.md).
      SANDBOX_DAYS: '8',
      LOG_LEVEL: 'warn',
      RATE_LIMIT: 'off',
    };
  });

  after(async () => {
    for (const run of runs) run.stop();
    await Promise.all(runs.map((run) => run.exited));
    await database?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('1. starts Stride with webhooks to private addresses allowed', async () => {
    const server = start(take(/WEBHOOK_ALLOW_PRIVATE=true npm start/));
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const healthy = await fetch(`${strideUrl}/healthz`).then((response) => response.ok, () => false);
      if (healthy) break;
      assert.equal(server.child.exitCode, null, `the server exited:\n${server.output}`);
      assert.ok(Date.now() < deadline, `the server did not start:\n${server.output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('2. makes the developer, their app (its credentials in app.json) and four test people, and installs the client', async () => {
    const output = await runToEnd(take(/users create[\s\S]*apps create[\s\S]*sandbox add/));
    assert.match(output, /added 4 test people for dev@example\.com/);
    const app = JSON.parse(readFileSync(join(appFolder, 'app.json'), 'utf8'));
    assert.match(app.client_secret, /^scs_/);
    assert.deepEqual(app.redirect_uris, [`http://127.0.0.1:${env.APP_PORT}/callback`]);
    await runToEnd(take(/npm install \.\.\/stride\/packages\/client/));
    assert.ok(existsSync(join(appFolder, 'node_modules', '@stride', 'client', 'package.json')));
  });

  it('3. runs the receiver, which answers the verification once the endpoint is added and refuses forged deliveries', async () => {
    saveFile(take(/^\/\/ receiver\.mjs/));
    receiver = start(take(/node receiver\.mjs/));
    await receiver.waitFor(/receiver listening/);
    await runToEnd(take(/webhooks add/));
    secret = JSON.parse(readFileSync(join(appFolder, 'webhook.json'), 'utf8')).secret;
    assert.match(secret, /^whsec_/);
    await receiver.waitFor(/verified webhook\.verification \{"challenge":/);

    // Signed with another secret, or not signed at all: refused, and nothing is printed as heard.
    const hookUrl = `http://127.0.0.1:${env.HOOK_PORT}/stride-hooks`;
    const body = JSON.stringify({ type: 'steps.updated', timestamp: new Date().toISOString(), data: { user_id: 'forged' } });
    const id = `msg_${randomBytes(8).toString('hex')}`;
    const now = new Date();
    const forger = new Webhook(`whsec_${randomBytes(24).toString('base64')}`);
    const forged = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': forger.sign(id, now, body) },
      body,
    });
    assert.equal(forged.status, 401);
    const unsigned = await fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(unsigned.status, 401);
    // Stride's own secret, on a body changed after signing: refused too.
    const signed = new Webhook(secret).sign(id, now, body);
    const tampered = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signed },
      body: body.replace('forged', 'forgeD'),
    });
    assert.equal(tampered.status, 401);
    assert.doesNotMatch(receiver.output, /"user_id":"forge/);
  });

  it('4. the app prints the URL; signed in, the developer answers as the test runner; the app reads their week', async () => {
    saveFile(take(/^\/\/ app\.mjs/));
    const app = start(take(/node app\.mjs/));
    const [, url] = await app.waitFor(/Open this in your browser, signed in to Stride:\n(\S+)\n/);
    assert.ok(url!.startsWith(`${strideUrl}/oauth2/authorize?`), url);

    const browser = new Browser(null, strideUrl);
    assert.equal((await signIn(browser, DEVELOPER.email, DEVELOPER.password)).status, 303);
    const consent = await browser.get(url!);
    assert.equal(consent.status, 200);
    assert.match(consent.body, /Who answers\?/);
    const choices = [...consent.body.matchAll(/name="consent_as" value="([^"]+)"[^>]*> ([^<]+)<\/label>/g)].map(([, id, label]) => ({ id: id!, label: label! }));
    assert.equal(choices.length, 5, 'yourself and four test people');
    runner = choices.find((choice) => choice.label.startsWith('Test runner'))!;
    assert.ok(runner, choices.map((choice) => choice.label).join(', '));
    const granted = [...consent.body.matchAll(/name="granted_scope" value="([^"]+)" checked/g)].map((match) => match[1]!);
    const decision = await browser.post('/oauth2/authorize', { ...formFields(consent.body, '/oauth2/authorize'), consent_as: runner.id, granted_scope: granted, decision: 'allow' });
    assert.equal(decision.status, 303, decision.body.slice(0, 300));
    const callback = decision.location();
    assert.equal(callback.origin, `http://127.0.0.1:${env.APP_PORT}`);
    const landed = await fetch(callback);
    assert.equal(landed.status, 200);
    assert.match(await landed.text(), /you can close this tab/);

    assert.equal(await app.exited, 0, app.output);
    const [, timezone] = /^Test runner [^\n]*\(([\w/]+)\), the last 7 days:$/m.exec(app.output) ?? assert.fail(app.output);
    assert.equal(timezone, 'America/New_York');
    const days = [...app.output.matchAll(/^(\d{4}-\d{2}-\d{2}) +(\d+) steps {2}heart rate (\d+)–(\d+), average (\d+)$/gm)];
    // Six days back from now widen to whole days: the six dates before today and today, each with a
    // pulse (six or eight dates across a change of the runner's clock); the runner walks every day,
    // though today's may not have begun.
    const clockChanged = DateTime.now().setZone(timezone!).offset !== DateTime.now().minus({ days: 6 }).setZone(timezone!).offset;
    assert.ok(clockChanged ? days.length >= 6 && days.length <= 8 : days.length === 7, app.output);
    assert.equal(new Set(days.map((day) => day[1])).size, days.length);
    assert.ok(days.every(([, , , min, max]) => Number(min) < Number(max)), app.output);
    assert.ok(days.filter(([, , steps]) => Number(steps) > 1000).length >= 6, app.output);

    const tokens = JSON.parse(readFileSync(join(appFolder, 'tokens.json'), 'utf8'));
    assert.match(tokens.accessToken, /^sat_/);
    assert.deepEqual(tokens.scope, ['read_profile', 'read_activity', 'read_heartrate']);
    const me = await (await fetch(`${strideUrl}/v1/users/me`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })).json();
    assert.equal(me.id, runner.id, 'the tokens are the runner’s, not the developer’s');
    await receiver.waitFor(new RegExp(`verified grant\\.created \\{"user_id":"${runner.id}"`), 'grant.created for the runner');
  });

  it('5. Late sync on the test people page makes a signed steps.updated of the runner arrive; the kept tokens read that date', async () => {
    const browser = new Browser(null, strideUrl);
    assert.equal((await signIn(browser, DEVELOPER.email, DEVELOPER.password)).status, 303);
    // The page first sends the browser to its own address with a form id (form-ids.ts).
    const first = await browser.get('/dashboard/test-people');
    const page = first.status === 302 ? await browser.get(first.location().pathname + first.location().search) : first;
    assert.equal(page.status, 200);
    assert.match(page.body, /Late sync \(3 days ago\)/);
    const action = `/dashboard/test-people/${encodeURIComponent(runner.id)}/late-sync`;
    const synced = await browser.post(action, formFields(page.body, action));
    assert.equal(synced.status, 303);
    // The page's notice names the person and the walk's date, which the event names too.
    const back = synced.location().searchParams;
    assert.deepEqual([back.get('done'), back.get('person')], ['late', runner.id]);
    const [line] = await receiver.waitFor(new RegExp(`verified steps\\.updated \\{"user_id":"${runner.id}".*\\n`), 'steps.updated for the runner');
    const data = JSON.parse(line!.slice('verified steps.updated '.length));
    assert.ok(data.ranges.length > 0 && data.dates.length > 0, line);
    assert.deepEqual(data.dates, [back.get('date')]);

    // The reader puts the printed date into the page's command and reads the day with the kept tokens.
    const read = take(/summary\/daily\/\?start_date=2026-11-23&end_date=2026-11-23/);
    const summary = JSON.parse(await runToEnd({ ...read, code: read.code.replaceAll('2026-11-23', data.dates[0]) }));
    assert.equal(summary.timezone, 'America/New_York');
    assert.equal(summary.days.length, 1);
    assert.equal(summary.days[0].date, data.dates[0]);
    assert.ok(summary.days[0].steps > 0, JSON.stringify(summary));
    assert.equal(next, blocks.length, 'every block of the page was run');
  });
});
