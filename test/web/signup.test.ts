/** Sign-up's form: every field's problem at once, in plain words, next to its field; what was typed is kept. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Browser, createOAuthTestApp, formFields } from '../oauth/flow.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { textOf } from './pages-support.js';

cheapPasswordHashing();

forEachDialect('sign-up form', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp(dialect);
  });
  after(() => t.close());

  const send = async (fields: Record<string, string>) => {
    const browser = new Browser(t.app);
    const page = await browser.get('/signup');
    return browser.post('/signup', { ...formFields(page.body, '/signup'), ...fields });
  };

  it('reports every field that needs a change, each next to its field, in the words of the page', async () => {
    const answer = await send({ email: 'walker.example.com', password: 'short', display_name: 'W'.repeat(101) });
    assert.equal(answer.status, 400);
    assert.match(textOf(answer.body, 'email-error') ?? '', /^Enter an email address like name@example\.com\.$/);
    assert.match(textOf(answer.body, 'password-error') ?? '', /^Your password is 5 characters long: it needs at least 8\.$/);
    assert.match(textOf(answer.body, 'display_name-error') ?? '', /^Your name can be at most 100 characters long\.$/);
    // Each field points at its own message, for a screen reader.
    for (const field of ['email', 'password', 'display_name']) {
      const input = new RegExp(`<input id="${field}"[^>]*>`).exec(answer.body)?.[0] ?? '';
      assert.match(input, new RegExp(`aria-describedby="[^"]*${field}-error"`), field);
      assert.match(input, /aria-invalid="true"/, field);
    }
    assert.match(textOf(answer.body, 'form-error') ?? '', /Some fields need a change/);
    // None of the API's wording (field names, "must be") reaches the page.
    assert.doesNotMatch(answer.body, /display_name must|password must|email must/);
    // What was typed comes back, except the password.
    assert.match(answer.body, /value="walker\.example\.com"/);
    assert.match(answer.body, new RegExp(`value="${'W'.repeat(101)}"`));
    assert.doesNotMatch(answer.body, /value="short"/);
  });

  it('reports a single problem as one, and an empty form field by field', async () => {
    const one = await send({ email: 'one@example.com', password: '' });
    assert.equal(one.status, 400);
    assert.equal(textOf(one.body, 'email-error'), undefined);
    assert.match(textOf(one.body, 'password-error') ?? '', /Choose a password of at least 8 characters/);
    assert.match(textOf(one.body, 'form-error') ?? '', /One field needs a change/);
    const empty = await send({ email: '', password: '' });
    assert.match(textOf(empty.body, 'email-error') ?? '', /Enter your email address/);
    assert.match(textOf(empty.body, 'password-error') ?? '', /Choose a password/);
  });

  it('refuses a name that reads as Stride, and an empty name when the email begins with stride', async () => {
    const named = await send({ email: 'impostor@example.com', password: 'long enough password', display_name: 'Stride Security' });
    assert.equal(named.status, 400);
    assert.match(textOf(named.body, 'display_name-error') ?? '', /^“Stride” is the name of this service: choose a name that does not read as it\.$/);
    const unnamed = await send({ email: 'Stride@example.com', password: 'long enough password', display_name: '' });
    assert.equal(unnamed.status, 400);
    assert.match(textOf(unnamed.body, 'display_name-error') ?? '', /^Enter your name: the first part of your email reads as “Stride”, the name of this service, which others would see as your name\.$/);
    assert.equal(await t.database.stores.users.findByEmail('impostor@example.com'), undefined);
    assert.equal(await t.database.stores.users.findByEmail('stride@example.com'), undefined);
  });

  it('goes on to sign-in when every field is right', async () => {
    const answer = await send({ email: `fine-${Date.now()}@example.com`, password: 'long enough password', display_name: '' });
    assert.equal(answer.status, 303);
    assert.equal(answer.location().pathname, '/login');
  });
});
