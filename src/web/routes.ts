/**
 * The browser pages: sign-in, sign-up, the authorization endpoint's sign-in redirect and consent,
 * dashboard, account, a person's data in charts, the demo callback, and their assets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { accountPages } from './pages/account.js';
import { accountDataPages } from './pages/account-data.js';
import { accountImportPages } from './pages/account-imports.js';
import { dataPages } from './pages/data-pages.js';
import { authorizePages } from './pages/authorize.js';
import { appPages } from './pages/app-pages.js';
import { dashboardPages } from './pages/dashboard.js';
import { webhookPages } from './pages/webhooks.js';
import { fitbitSubscriberPages } from './pages/fitbit-subscriber.js';
import { demoCallbackPage } from './pages/demo-callback.js';
import { devicePages } from './pages/device.js';
import { forgotPasswordPages } from './pages/forgot-password.js';
import { loginPages } from './pages/login.js';
import { passwordResetPages } from './pages/password-reset.js';
import { signupPages } from './pages/signup.js';
import { testPeoplePages } from './pages/test-people.js';
import { testPersonConnectPage } from './pages/test-person-connect.js';
import { ownedAppScope } from './owned-app.js';
import { signedInScope } from './signed-in.js';
import { ASSETS_DIR } from './views.js';

/** Every asset is served by Stride itself (no CDN); the CSP allows only same-origin scripts and styles. */
const ASSETS = {
  'stride.css': { type: 'text/css; charset=utf-8', body: readFileSync(join(ASSETS_DIR, 'stride.css'), 'utf8') },
  'copy.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(ASSETS_DIR, 'copy.js'), 'utf8') },
  'consent-as.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(ASSETS_DIR, 'consent-as.js'), 'utf8') },
  'favicon.svg': { type: 'image/svg+xml', body: readFileSync(join(ASSETS_DIR, 'favicon.svg'), 'utf8') },
};

export async function webRoutes(app: FastifyInstance): Promise<void> {
  for (const [name, asset] of Object.entries(ASSETS)) {
    app.get(`/assets/${name}`, async (_request, reply) =>
      reply.header('content-type', asset.type).header('cache-control', 'public, max-age=3600').send(asset.body),
    );
  }
  // Browsers ask for /favicon.ico where a page names no icon (a JSON answer opened in a tab).
  const icon = ASSETS['favicon.svg'];
  app.get('/favicon.ico', async (_request, reply) => reply.header('content-type', icon.type).header('cache-control', 'public, max-age=3600').send(icon.body));
  // A person opening the server's address lands on their account (or the sign-in page).
  app.get('/', async (_request, reply) => reply.redirect('/account', 302));
  await app.register(loginPages);
  await app.register(signupPages);
  await app.register(passwordResetPages);
  await app.register(forgotPasswordPages);
  await app.register(authorizePages);
  await app.register(devicePages);
  // The pages of a signed-in person: their session is checked before any handler (signed-in.ts).
  await signedInScope(app, [dashboardPages, testPeoplePages, accountPages, accountDataPages, accountImportPages, dataPages]);
  // Every page of one app: signed in, and the app's owner (owned-app.ts).
  await ownedAppScope(app, [appPages, webhookPages, fitbitSubscriberPages, testPersonConnectPage]);
  await app.register(demoCallbackPage);
}
