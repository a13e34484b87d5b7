/**
 * The redirect URI of the requests the pages build for a developer (src/web/developer-redirect.ts):
 * the one on the server's own origin where the app has one, so that the demo app registered on
 * another port earlier still links to the server that shows the page.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { developerRedirectUri } from '../../src/web/developer-redirect.js';
import type { App } from '../../src/store/apps.js';

const appWith = (redirectUris: string[]) => ({ redirectUris }) as unknown as App;

it('picks the redirect URI on the server\'s own origin, else the app\'s first', () => {
  const demo = appWith(['http://localhost:3100/demo/callback', 'http://localhost:3000/demo/callback']);
  assert.equal(developerRedirectUri(demo, 'http://localhost:3000'), 'http://localhost:3000/demo/callback');
  assert.equal(developerRedirectUri(demo, 'http://localhost:3100'), 'http://localhost:3100/demo/callback');
  const elsewhere = appWith(['https://app.example/callback', 'com.example.app:/cb']);
  assert.equal(developerRedirectUri(elsewhere, 'http://localhost:3000'), 'https://app.example/callback');
  assert.equal(developerRedirectUri(appWith([]), 'http://localhost:3000'), '');
});
