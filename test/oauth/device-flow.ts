/** Helpers for the device authorization grant's tests (RFC 8628). */
import assert from 'node:assert/strict';
import { registerApp, DEVICE_CODE_GRANT_TYPE } from '../../src/domain/apps.js';
import type { TestApp } from '../support/app.js';
import { Browser, checkboxScopes, encodeForm, formFields, signIn, tokenRequest, type Fixture } from './flow.js';

export { DEVICE_CODE_GRANT_TYPE };

/** A public app allowed the device grant (and the code flow). */
export async function registerDeviceApp(t: TestApp, f: Fixture, grantTypes = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT_TYPE]) {
  return registerApp(t.database.stores.apps, t.clock, f.developer.id, {
    name: 'Living Room Scale',
    redirectUris: ['https://scale.example/callback'],
    scopes: ['read_profile', 'read_activity'],
    isPublic: true,
    grantTypes,
  });
}

export function deviceAuthorization(t: TestApp, form: Record<string, string>) {
  return t.app.inject({
    method: 'POST',
    url: '/oauth2/device_authorization',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: encodeForm(form),
  });
}

export function poll(t: TestApp, clientId: string, deviceCode: string) {
  return tokenRequest(t, { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId });
}

/** A signed-in browser of the fixture's user. */
export async function signedInBrowser(t: TestApp, f: Fixture): Promise<Browser> {
  const browser = new Browser(t.app);
  assert.equal((await signIn(browser, f.user.email, f.password)).status, 303);
  return browser;
}

/** Types `typed` at /device; returns the answer (the consent page when the code is right). */
export async function typeCode(browser: Browser, typed: string) {
  const page = await browser.get('/device');
  assert.equal(page.status, 200, page.body.slice(0, 300));
  return browser.post('/device', { ...formFields(page.body, '/device'), user_code: typed });
}

/** Answers the consent page of a device request. */
export async function answerConsent(browser: Browser, consentHtml: string, decision: 'allow' | 'deny', untick: string[] = []) {
  const fields = formFields(consentHtml, '/device/consent');
  const ticked = checkboxScopes(consentHtml).filter((scope) => !untick.includes(scope));
  return browser.post('/device/consent', { ...fields, granted_scope: ticked, decision });
}
