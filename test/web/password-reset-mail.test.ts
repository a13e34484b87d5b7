/**
 * "Forgot your password?" with SMTP_URL set: the link arrives by email at a real SMTP receiver on
 * a loopback port (smtp-server), and works as the operator's link does; the answer is the same for
 * an address no account uses (and no mail goes out); asking is rate limited per email; a mail that
 * cannot be sent changes nothing for the person.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { Browser, createOAuthTestApp, formFields, signIn } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { newAccount, PASSWORD, textOf } from './pages-support.js';

cheapPasswordHashing();

interface Mail {
  to: string[];
  body: string;
}

/** An SMTP receiver on a free loopback port that keeps every mail it is given. */
async function smtpReceiver() {
  const mails: Mail[] = [];
  const waiting: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), body: Buffer.concat(chunks).toString('utf8') });
        for (const wake of waiting.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** The next mail, or a failure after 5 s. */
    async next(count: number): Promise<Mail> {
      const deadline = Date.now() + 5000;
      while (mails.length < count) {
        if (Date.now() > deadline) throw new Error(`no mail number ${count} arrived`);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return mails[count - 1]!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The link in a mail's text (quoted-printable undone). */
function linkIn(mail: Mail): URL {
  const text = mail.body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const match = /https?:\/\/\S+\/password-reset\?token=\S+/.exec(text);
  assert.ok(match, `a link in the mail:\n${text}`);
  return new URL(match[0]);
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

forEachDialect('password reset by email', (dialect) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
  before(async () => {
    smtp = await smtpReceiver();
    t = await createOAuthTestApp(dialect, { SMTP_URL: smtp.url, SMTP_FROM: 'Stride <stride@stride.test>', RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '1000/min', RATE_LIMIT_LOGIN_ACCOUNT: '3/15min' });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const ask = async (email: string) => {
    const browser = new Browser(t.app);
    const page = await browser.get('/forgot-password');
    assert.equal(page.status, 200);
    return browser.post('/forgot-password', { ...formFields(page.body, '/forgot-password'), email });
  };

  it('mails a link that sets a new password, from the sign-in page\'s "Forgot your password?"', async () => {
    const login = await new Browser(t.app).get('/login');
    assert.match(login.body, /<p id="forgot"><a href="\/forgot-password">Forgot your password\?<\/a>/);

    const user = await newAccount(t);
    const before = smtp.mails.length;
    const answer = await ask(user.email);
    assert.equal(answer.status, 200);
    assert.match(textOf(answer.body, 'notice') ?? '', /If an account uses that address, a link to set a new password is on its way/);

    const mail = await smtp.next(before + 1);
    assert.deepEqual(mail.to, [user.email]);
    assert.match(mail.body, /^From: Stride <stride@stride\.test>/m);
    const link = linkIn(mail);
    assert.equal(link.origin, 'http://stride.test', 'the server\'s public origin');

    const browser = new Browser(t.app);
    const page = await browser.get(link.pathname + link.search);
    assert.equal(page.status, 200);
    const set = await browser.post('/password-reset', { ...formFields(page.body, '/password-reset'), password: 'a mailed new passphrase' });
    assert.equal(set.status, 303);
    assert.equal((await signIn(new Browser(t.app), user.email, PASSWORD)).status, 401, 'the old password no longer works');
    assert.equal((await signIn(new Browser(t.app), user.email, 'a mailed new passphrase')).status, 303);
  });

  it('answers the same for an address no account uses, and sends it no mail', async () => {
    const user = await newAccount(t);
    const before = smtp.mails.length;
    const unknown = await ask('nobody-here@example.com');
    const known = await ask(user.email);
    assert.equal(unknown.status, known.status);
    assert.equal(textOf(unknown.body, 'notice'), textOf(known.body, 'notice'));
    assert.equal(unknown.body.replace(/value="[^"]*"/g, ''), known.body.replace(/value="[^"]*"/g, ''), 'the same page but for its token and the email typed');
    await smtp.next(before + 1);
    await settle(300);
    assert.deepEqual(smtp.mails.slice(before).map((mail) => mail.to), [[user.email]], 'one mail, to the account only');
  });

  it('refuses a form not sent from its page', async () => {
    const before = smtp.mails.length;
    const user = await newAccount(t);
    const refused = await new Browser(t.app).post('/forgot-password', { email: user.email });
    assert.equal(refused.status, 403);
    await settle(300);
    assert.equal(smtp.mails.length, before);
  });

  it('limits the links asked for one email, whether or not an account uses it', async () => {
    const user = await newAccount(t);
    for (const email of [user.email, 'nobody-either@example.com']) {
      for (let i = 0; i < 3; i++) assert.equal((await ask(email.toUpperCase())).status, 200, `request ${i + 1} of ${email}`);
      const refused = await ask(email);
      assert.equal(refused.status, 429, `the fourth request for ${email}`);
      assert.match(refused.headers['retry-after'] as string, /^\d+$/);
    }
    assert.equal((await ask(`other-${user.email}`)).status, 200, 'another email is not limited');
  });
});

forEachDialect('password reset by email, per client address', (dialect) => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
  before(async () => {
    smtp = await smtpReceiver();
    t = await createOAuthTestApp(dialect, { SMTP_URL: smtp.url, RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '3/min', RATE_LIMIT_LOGIN_ACCOUNT: '100/15min' });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  it('shares the sign-in attempts of a client address', async () => {
    const browser = new Browser(t.app);
    const page = await browser.get('/forgot-password');
    const fields = formFields(page.body, '/forgot-password');
    for (let i = 0; i < 2; i++) assert.equal((await browser.post('/forgot-password', { ...fields, email: `someone-${i}@example.com` })).status, 200);
    assert.equal((await signIn(browser, 'someone@example.com', 'not the password')).status, 401);
    assert.equal((await browser.post('/forgot-password', { ...fields, email: 'someone-3@example.com' })).status, 429, 'the fourth attempt from this address, sign-in included');
  });
});

forEachDialect('password reset by email, when the mail cannot be sent', (dialect) => {
  let t: TestApp;
  before(async () => {
    // A loopback port where nothing listens: every send fails.
    const closed = await smtpReceiver();
    const url = closed.url;
    await closed.close();
    t = await createOAuthTestApp(dialect, { SMTP_URL: url });
  });
  after(() => t.close());

  it('answers as always, and the server goes on', async () => {
    const user = await newAccount(t);
    const browser = new Browser(t.app);
    const page = await browser.get('/forgot-password');
    const answer = await browser.post('/forgot-password', { ...formFields(page.body, '/forgot-password'), email: user.email });
    assert.equal(answer.status, 200);
    await settle(500);
    assert.equal((await signIn(new Browser(t.app), user.email, PASSWORD)).status, 303, 'the server still answers, and the password is unchanged');
  });
});

forEachDialect('password reset without SMTP_URL', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp(dialect);
  });
  after(() => t.close());

  it('has no form to ask for a link, and the sign-in page says whom to ask', async () => {
    assert.equal((await new Browser(t.app).get('/forgot-password')).status, 404);
    const login = await new Browser(t.app).get('/login');
    assert.match(textOf(login.body, 'forgot') ?? '', /Ask whoever runs this Stride server/);
  });
});
