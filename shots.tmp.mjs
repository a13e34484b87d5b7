// Throwaway: screenshots of the pages at 390 and 1280 px, light and dark (not committed).
import { launchBrowser } from './dist/test/support/browser.js';
import { startStride, signUp, registerAppInDashboard, uniqueEmail } from './dist/test/e2e/support.js';
const only = process.argv[2] ? new RegExp(process.argv[2]) : null;
const stride = await startStride('sqlite', { WEBHOOK_ALLOW_PRIVATE: process.env.ALLOW ?? 'false' });
const browser = await launchBrowser();
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${stride.url}/signup?return_to=%2Fdashboard`);
  const email = uniqueEmail('shots');
  await signUp(page, 'Shot Developer', email);
  const reg = await registerAppInDashboard(page, stride, { name: 'Shot App', description: 'Created by `stride demo` to try the flow.', redirectUri: 'https://shot.example/callback', scopes: ['read_profile', 'read_activity'] });
  // A webhook endpoint with a long URL, through the page.
  await page.goto(`${reg.detailUrl}/webhooks`);
  await page.getByLabel('URL').fill(`https://hooks.example.com/stride/${'events'.repeat(8)}`);
  await page.getByRole('button', { name: 'Add the endpoint' }).click();
  await page.waitForLoadState();
  const cookies = await context.cookies();
  const authorize = `/oauth2/authorize?response_type=code&client_id=${reg.clientId}&redirect_uri=${encodeURIComponent('https://shot.example/callback')}&state=s`;
  const pages = {
    login: { path: '/login', signedIn: false },
    'login-from-app': { path: `/login?return_to=${encodeURIComponent(authorize)}`, signedIn: false },
    signup: { path: '/signup', signedIn: false },
    dashboard: { path: '/dashboard' },
    'app-detail': { path: new URL(reg.detailUrl).pathname },
    webhooks: { path: `${new URL(reg.detailUrl).pathname}/webhooks` },
    consent: { path: authorize },
    account: { path: '/account' },
    'not-found': { path: '/nope' },
    'authorize-error': { path: `/oauth2/authorize?response_type=code&client_id=${reg.clientId}&redirect_uri=https%3A%2F%2Fevil.example%2Fcb` },
    'demo-callback': { path: `/demo/callback?code=sac_${'x'.repeat(43)}&state=${'s'.repeat(22)}`, signedIn: false },
  };
  for (const [name, { path, signedIn = true }] of Object.entries(pages)) {
    if (only && !only.test(name)) continue;
    for (const colorScheme of ['light', 'dark']) for (const width of [390, 1280]) {
      const ctx = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
      if (signedIn) await ctx.addCookies(cookies);
      const p = await ctx.newPage();
      await p.goto(`${stride.url}${path}`);
      if (process.env.SUBMIT && name === 'signup') { await p.getByLabel('Email').fill('nope'); await p.getByLabel(/^Password/).fill('short'); await p.getByRole('button', { name: 'Create account' }).click(); }
      const wide = await p.evaluate(() => document.documentElement.scrollWidth);
      await p.screenshot({ path: `/tmp/shots/${name}-${width}-${colorScheme}.png`, fullPage: true });
      const h = await p.evaluate(() => document.documentElement.scrollHeight);
      console.log(name, width, colorScheme, `scrollWidth=${wide}`, `height=${h}`);
      await ctx.close();
    }
  }
} finally {
  await browser.close();
  await stride.close();
}
