/** `GET /demo/callback`: shows the code and state, escaped, and the curl command to exchange it. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createOAuthTestApp } from '../oauth/flow.js';

forEachDialect('demo callback page', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createOAuthTestApp(dialect);
  });
  after(() => t.close());

  it('shows code and state escaped, with a curl command for the token exchange', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/demo/callback?code=sac_abc&state=${encodeURIComponent('<script>x</script>')}` });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, /sac_abc/);
    assert.doesNotMatch(response.body, /<script>x/);
    assert.match(response.body, /&lt;script&gt;x&lt;\/script&gt;/);
    assert.match(response.body, /curl -s -X POST http:\/\/stride\.test\/oauth2\/token/);
    assert.match(response.body, /redirect_uri=&#39;http:\/\/stride\.test\/demo\/callback&#39;/);
    // The command's $CLIENT_SECRET is explained before it (that no line wraps: test/e2e/trust-flows.ts).
    const explained = response.body.indexOf('export CLIENT_SECRET=');
    const used = response.body.indexOf('client_secret=&quot;$CLIENT_SECRET&quot;');
    assert.ok(explained >= 0 && used > explained, 'CLIENT_SECRET is set before the command uses it');
    assert.match(response.body, /stride demo<\/code> printed it/);
  });

  it('shows an error sent back instead of a code, in its own words for the standard codes', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/demo/callback?error=access_denied&error_description=the+user+denied+access' });
    assert.match(response.body, /<code>access_denied<\/code>\. The person \(or Stride\) refused the request\./);
    assert.doesNotMatch(response.body, /curl/);
  });

  it('never shows the error_description or an unknown error code it is given', async () => {
    const spoof = 'Your account is locked. Call +1 555 0100 to unlock it';
    for (const error of ['access_denied', 'invalid_scope', 'account_locked_call_support']) {
      const response = await t.app.inject({ method: 'GET', url: `/demo/callback?error=${error}&error_description=${encodeURIComponent(spoof)}` });
      assert.equal(response.statusCode, 200);
      assert.doesNotMatch(response.body, /locked|555/, error);
      assert.match(response.body, /id="demo-error"/);
    }
    const unknown = await t.app.inject({ method: 'GET', url: '/demo/callback?error=toString' });
    assert.match(unknown.body, /an error that this page does not know/);
    assert.doesNotMatch(unknown.body, /toString/);
  });

  it('offers a way on after Deny: back to the dashboard, to start the request again', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/demo/callback?error=access_denied&state=s' });
    const waysOn = /<section[^>]*id="ways-on">([\s\S]*?)<\/section>/.exec(response.body)?.[1] ?? '';
    assert.match(waysOn, /<a href="\/dashboard">dashboard<\/a>/);
    assert.match(waysOn, /Try it with your own account/);
  });

  it('gives each command a copy button, in a box that scrolls rather than breaks the command', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/demo/callback?code=abc&state=s' });
    for (const id of ['secret-command', 'exchange']) {
      assert.match(response.body, new RegExp(`<pre class="command" data-scroll[^>]*><code id="${id}">`));
      assert.match(response.body, new RegExp(`<button type="button" class="secondary copy" data-copy="${id}"`));
    }
  });
});
